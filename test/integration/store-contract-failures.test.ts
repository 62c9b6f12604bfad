// The contract suite explains itself (docs/testing.md): run from the built dist/testing (what a
// studio installs) against deliberately broken stores, each failure names the call, its arguments
// (a value by its length only: it holds tokens) and what was expected, and its stack points at
// dist/testing, which the package ships, never at lib/testing, which it does not.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { StoredValue, TokenStore } from 'express-platform-login/testing';

const root = join(__dirname, '..', '..');
const dist = join(root, 'dist', 'testing', 'index.js');

type Contract = typeof import('express-platform-login/testing').tokenStoreContract;
let tokenStoreContract: Contract;
beforeAll(() => {
  if (!existsSync(dist)) {
    throw new Error('dist/ is missing: run `npm run build` first (`npm test` builds first).');
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  ({ tokenStoreContract } = require(dist) as { tokenStoreContract: Contract });
});

/** A correct store in memory, which each broken store below spoils in one way. */
function memoryStore(): TokenStore {
  const values = new Map<string, StoredValue>();
  const live = (key: string) => {
    const stored = values.get(key);
    return stored !== undefined && stored.expiresAt > Date.now() ? stored : undefined;
  };
  const check = (key: string, ttlMs = 1, version = 1) => {
    if (key === '' || !(ttlMs >= 1) || !(version >= 1)) throw new TypeError('wrong argument');
  };
  return {
    async get(key) {
      check(key);
      return live(key);
    },
    async put(key, value, { expectedVersion, ttlMs }) {
      check(key, ttlMs, expectedVersion ?? 1);
      if ((live(key)?.version ?? null) !== expectedVersion) return undefined;
      const version = (expectedVersion ?? 0) + 1;
      values.set(key, { value, version, expiresAt: Date.now() + ttlMs });
      return version;
    },
    async delete(key, expectedVersion) {
      check(key, 1, expectedVersion ?? 1);
      const stored = live(key);
      if (!stored || (expectedVersion !== undefined && stored.version !== expectedVersion))
        return false;
      return values.delete(key);
    },
    async renew(key, ttlMs) {
      check(key, ttlMs);
      const stored = live(key);
      if (!stored) return false;
      stored.expiresAt = Date.now() + ttlMs;
      return true;
    },
  };
}

/** Runs the suite against `store`; resolves each test's failure (undefined: it passed) by name. */
async function runContract(store: TokenStore): Promise<Map<string, Error | undefined>> {
  const tests: [string, () => Promise<void>][] = [];
  let prefix = '';
  tokenStoreContract(() => store, {
    testFunctions: {
      describe: (name, body) => {
        prefix = name;
        body();
      },
      test: (name, body) => tests.push([`${prefix} › ${name}`, body]),
    },
  });
  const outcomes = new Map<string, Error | undefined>();
  for (const [name, body] of tests) {
    outcomes.set(
      name,
      await body().then(
        () => undefined,
        (error: Error) => error,
      ),
    );
  }
  return outcomes;
}

const failureOf = (outcomes: Map<string, Error | undefined>, test: string): Error => {
  const failure = outcomes.get(test);
  if (failure === undefined) throw new Error(`expected "${test}" to fail`);
  return failure;
};

test('a correct store passes every test', async () => {
  const outcomes = await runContract(memoryStore());
  expect([...outcomes].filter(([, failure]) => failure !== undefined)).toEqual([]);
}, 30_000);

test('a store that takes an empty key: the call named, and what was expected', async () => {
  const store = memoryStore();
  const outcomes = await runContract({
    ...store,
    get: async (key) => (key === '' ? undefined : store.get(key)),
  });
  const failure = failureOf(
    outcomes,
    'arguments › a wrong key, version or lifetime is a TypeError',
  );
  expect(failure.message).toBe(
    'store.get("") resolved undefined; expected a rejection with TypeError (a wrong argument is refused before the backend is asked: an empty key).',
  );
  // The frame under the message is the suite's line in the shipped dist/testing.
  const frames = failure.stack!.split('\n').filter((line) => line.trimStart().startsWith('at '));
  expect(frames[0]).toContain(join('dist', 'testing', 'store-contract.js'));
  expect(failure.stack).not.toContain(join('lib', 'testing'));
}, 30_000);

test('a store whose first write is version 2: the put named with its arguments, its value by length only', async () => {
  const store = memoryStore();
  const outcomes = await runContract({
    ...store,
    put: async (key, value, options) => {
      const version = await store.put(key, value, options);
      return version === undefined ? undefined : version + 1;
    },
  });
  const failure = failureOf(
    outcomes,
    'get and put › a first write is version 1, read back with its value and the end of its lifetime',
  );
  expect(failure.message).toMatch(
    /^store\.put\("t:contract-[0-9a-f-]+", <value: 52 characters>, \{ expectedVersion: null, ttlMs: 60000 \}\) resolved 2; expected 1 \(a first write is version 1\)\.$/,
  );
  expect(failure.message).not.toContain('accessToken');
}, 30_000);

test('a store that reads back another version: the get named, the value shown by length', async () => {
  const store = memoryStore();
  const outcomes = await runContract({
    ...store,
    get: async (key) => {
      const stored = await store.get(key);
      return stored && { ...stored, version: stored.version + 10 };
    },
  });
  const failure = failureOf(
    outcomes,
    'get and put › a first write over a value is refused and changes nothing',
  );
  expect(failure.message).toMatch(
    /^store\.get\("t:contract-[^"]+"\) resolved \{ value: <5 characters>, version: 11, expiresAt: \d+ \}; expected \{ value: <5 characters>, version: 1 \} \(the refused write\)\.$/,
  );
  expect(failure.message).not.toContain('first');
}, 30_000);
