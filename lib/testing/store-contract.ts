// The TokenStore contract (core/token-store.ts) as one test suite, for a studio's own store and the
// package's: versioned reads, compare-and-set writes, deletes, renewals, lifetimes, concurrency and,
// when the store has it, `watch`. Declared with the test runner's `describe`/`test` (Jest's globals
// by default), checked with node:assert, so it runs under Jest, Vitest, Mocha or node:test alike.
// No fixed sleep: a lifetime is checked by polling the store, within a bound.
import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TokenStore } from '../core/token-store';
import { invalidOption } from '../errors';

/** A lifetime short enough to pass at once, and how long a store may take to drop it. */
const SHORT_TTL_MS = 30;
const EXPIRY_BOUND_MS = 2_000;
const LONG_TTL_MS = 60_000;

/** The test runner functions the suite declares its tests with. */
export interface ContractTestFunctions {
  describe(name: string, body: () => void): void;
  test(name: string, body: () => Promise<void>): void;
}

/** Options of {@link tokenStoreContract}. */
export interface TokenStoreContractOptions {
  /**
   * The runner's `describe` and `test` (or `it`). Defaults to the globals of the same names, as
   * Jest (and Vitest with `globals: true`, and Mocha) define them.
   */
  testFunctions?: ContractTestFunctions;
}

function globalTestFunctions(): ContractTestFunctions {
  const runner = globalThis as { describe?: unknown; test?: unknown; it?: unknown };
  const test = runner.test ?? runner.it;
  if (typeof runner.describe !== 'function' || typeof test !== 'function') {
    throw invalidOption(
      "tokenStoreContract(): no global `describe` and `test`: pass your runner's as `{ testFunctions: { describe, test } }`.",
      'testFunctions',
    );
  }
  return { describe: runner.describe, test } as ContractTestFunctions;
}

/** A key no other test uses, shaped as the package's keys are. */
const newKey = (): string => `t:contract-${randomUUID()}`;

/** Resolves once `key` reads as absent; fails after {@link EXPIRY_BOUND_MS}. */
async function expectGone(store: TokenStore, key: string, what: string): Promise<void> {
  const giveUpAt = Date.now() + EXPIRY_BOUND_MS;
  while ((await store.get(key)) !== undefined) {
    assert.ok(
      Date.now() < giveUpAt,
      `${what}: still there ${EXPIRY_BOUND_MS} ms after its lifetime`,
    );
    await sleep(10);
  }
}

/**
 * Declares the TokenStore contract tests where it is called (inside a `describe` of your own).
 * `getStore` is called in each test, so a store built in your `beforeAll` is seen. Keys are random.
 *
 * ```ts
 * import { tokenStoreContract } from 'express-platform-login/testing';
 * describe('MyTokenStore', () => {
 *   let store: MyTokenStore;
 *   beforeAll(async () => { store = await MyTokenStore.connect(); });
 *   afterAll(() => store.close());
 *   tokenStoreContract(() => store);
 * });
 * ```
 */
export function tokenStoreContract(
  getStore: () => TokenStore,
  options: TokenStoreContractOptions = {},
): void {
  const { describe, test } = options.testFunctions ?? globalTestFunctions();
  const store = (): TokenStore => getStore();
  const putNew = (key: string, value: string, ttlMs = LONG_TTL_MS) =>
    store().put(key, value, { expectedVersion: null, ttlMs });

  describe('get and put', () => {
    test('a key never written reads as undefined', async () => {
      assert.equal(await store().get(newKey()), undefined);
    });

    test('a first write is version 1, read back with its value and the end of its lifetime', async () => {
      const key = newKey();
      const value = '{"accessToken":"tøken-✓-|-\\"quoted\\"-\\\\","scope":[]}';
      const before = Date.now();
      assert.equal(await putNew(key, value), 1);
      const stored = await store().get(key);
      assert.ok(stored !== undefined, 'the value written is read back');
      assert.equal(stored.value, value);
      assert.equal(stored.version, 1);
      assert.ok(
        stored.expiresAt >= before + LONG_TTL_MS - 1_000 &&
          stored.expiresAt <= Date.now() + LONG_TTL_MS + 1_000,
        `expiresAt ${stored.expiresAt} is about ${LONG_TTL_MS} ms from the write`,
      );
    });

    test('a first write over a value is refused and changes nothing', async () => {
      const key = newKey();
      await putNew(key, 'first');
      assert.equal(await putNew(key, 'second'), undefined);
      assert.deepEqual(
        [(await store().get(key))?.value, (await store().get(key))?.version],
        ['first', 1],
      );
    });

    test('a write on the version read is the next version; on another version it is refused', async () => {
      const key = newKey();
      await putNew(key, 'v1');
      const ttl = { ttlMs: LONG_TTL_MS };
      assert.equal(await store().put(key, 'v2', { expectedVersion: 1, ...ttl }), 2);
      assert.equal(await store().put(key, 'stale', { expectedVersion: 1, ...ttl }), undefined);
      assert.equal(await store().put(key, 'ahead', { expectedVersion: 5, ...ttl }), undefined);
      assert.equal(await store().put(newKey(), 'none', { expectedVersion: 1, ...ttl }), undefined);
      const stored = await store().get(key);
      assert.deepEqual([stored?.value, stored?.version], ['v2', 2]);
    });

    test('a write sets the lifetime anew', async () => {
      const key = newKey();
      // Short beside LONG_TTL_MS, yet long enough to outlive the next call on a busy machine.
      await putNew(key, 'short', LONG_TTL_MS / 10);
      assert.equal(await store().put(key, 'long', { expectedVersion: 1, ttlMs: LONG_TTL_MS }), 2);
      const stored = await store().get(key);
      assert.ok(stored !== undefined && stored.expiresAt > Date.now() + LONG_TTL_MS / 2);
    });

    test('keys are independent; a value of 64 KiB survives', async () => {
      const [a, b] = [newKey(), newKey()];
      const big = 'x'.repeat(64 * 1024);
      await putNew(a, big);
      await putNew(b, 'b');
      assert.equal((await store().get(a))?.value, big);
      assert.equal((await store().get(b))?.value, 'b');
    });
  });

  describe('lifetimes', () => {
    test('a value is gone once its lifetime ends, and its key can be written afresh', async () => {
      const key = newKey();
      assert.equal(await putNew(key, 'brief', SHORT_TTL_MS), 1);
      await expectGone(store(), key, 'a value');
      assert.equal(await putNew(key, 'again'), 1);
    });

    test('renew gives a value more time, unchanged; a missing key cannot be renewed', async () => {
      const key = newKey();
      await putNew(key, 'kept', 2_000);
      assert.equal(await store().renew(key, LONG_TTL_MS), true);
      const stored = await store().get(key);
      assert.deepEqual([stored?.value, stored?.version], ['kept', 1]);
      assert.ok(stored !== undefined && stored.expiresAt > Date.now() + LONG_TTL_MS / 2);
      assert.equal(await store().renew(newKey(), LONG_TTL_MS), false);
      const brief = newKey();
      await putNew(brief, 'brief', LONG_TTL_MS);
      assert.equal(await store().renew(brief, SHORT_TTL_MS), true);
      await expectGone(store(), brief, 'a value renewed short');
    });
  });

  describe('delete', () => {
    test('deletes a value; a missing key deletes nothing', async () => {
      const key = newKey();
      await putNew(key, 'v');
      assert.equal(await store().delete(key), true);
      assert.equal(await store().get(key), undefined);
      assert.equal(await store().delete(key), false);
    });

    test('with a version: only while the value still has it', async () => {
      const key = newKey();
      await putNew(key, 'v1');
      await store().put(key, 'v2', { expectedVersion: 1, ttlMs: LONG_TTL_MS });
      assert.equal(await store().delete(key, 1), false);
      assert.equal((await store().get(key))?.value, 'v2');
      assert.equal(await store().delete(key, 2), true);
      assert.equal(await store().get(key), undefined);
    });
  });

  describe('concurrency', () => {
    test('50 concurrent first writes of one key: exactly one wins', async () => {
      const key = newKey();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => putNew(key, `writer-${i}`)),
      );
      const winners = results.filter((version) => version !== undefined);
      assert.deepEqual(winners, [1]);
      assert.equal((await store().get(key))?.value, `writer-${results.indexOf(1)}`);
    });

    test('50 concurrent writes on one version: exactly one wins, and its value is stored', async () => {
      const key = newKey();
      await putNew(key, 'base');
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          store().put(key, `writer-${i}`, { expectedVersion: 1, ttlMs: LONG_TTL_MS }),
        ),
      );
      assert.deepEqual(
        results.filter((version) => version !== undefined),
        [2],
      );
      assert.equal((await store().get(key))?.value, `writer-${results.indexOf(2)}`);
    });

    test('20 concurrent deletes on one version: exactly one deletes', async () => {
      const key = newKey();
      await putNew(key, 'v');
      const results = await Promise.all(Array.from({ length: 20 }, () => store().delete(key, 1)));
      assert.equal(results.filter(Boolean).length, 1);
    });
  });

  describe('arguments', () => {
    test('a wrong key, version or lifetime is a TypeError', async () => {
      await assert.rejects(store().get(''), TypeError);
      await assert.rejects(putNew('', 'v'), TypeError);
      await assert.rejects(
        store().put(newKey(), 'v', { expectedVersion: 0, ttlMs: 1000 }),
        TypeError,
      );
      await assert.rejects(
        store().put(newKey(), 'v', { expectedVersion: null, ttlMs: 0 }),
        TypeError,
      );
      await assert.rejects(store().delete(newKey(), 0), TypeError);
      await assert.rejects(store().renew(newKey(), -1), TypeError);
    });
  });

  describe('watch (optional: tested when the store has it)', () => {
    test('is told of a write and a delete of its key, and of nothing after unsubscribing', async () => {
      const watch = getStore().watch?.bind(getStore());
      if (watch === undefined) return; // the optional method is absent: nothing to hold it to
      const key = newKey();
      let told = 0;
      const unwatch = watch(key, () => (told += 1));
      const toldWithin = async (what: string) => {
        const before = told;
        const giveUpAt = Date.now() + EXPIRY_BOUND_MS;
        return async () => {
          while (told === before) {
            assert.ok(Date.now() < giveUpAt, `watch was not told of ${what}`);
            await sleep(5);
          }
        };
      };
      const afterWrite = await toldWithin('a write');
      await putNew(key, 'v');
      await afterWrite();
      const afterDelete = await toldWithin('a delete');
      await store().delete(key);
      await afterDelete();
      unwatch();
      const quiet = told;
      await putNew(key, 'again');
      await store().delete(key);
      assert.equal(told, quiet);
    });
  });
}
