// The TokenStore contract (core/token-store.ts) as one test suite, for a studio's own store and the
// package's: versioned reads, compare-and-set writes, deletes, renewals, lifetimes, concurrency and,
// when the store has it, `watch`. Declared with the test runner's `describe`/`test` (Jest's globals
// by default), checked without `expect`, so it runs under Jest, Vitest, Mocha or node:test alike.
// No fixed sleep: a lifetime is checked by polling the store, within a bound.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TokenStore } from '../core/token-store';
import { invalidOption } from '../errors';
import {
  ContractCalls,
  type Called,
  expectRejection,
  expectResult,
  expectStored,
  fail,
  resultOf,
  shown,
} from './contract-calls';

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

/** Resolves once `key` reads as absent; fails after {@link EXPIRY_BOUND_MS}, naming the call. */
async function expectGone(calls: ContractCalls, key: string, lifetime: string): Promise<void> {
  const giveUpAt = Date.now() + EXPIRY_BOUND_MS;
  for (;;) {
    const read = await calls.get(key);
    if (!read.rejected && read.result === undefined) return;
    if (read.rejected || Date.now() >= giveUpAt) {
      fail(
        read,
        'undefined',
        `${EXPIRY_BOUND_MS} ms after the end of its lifetime (${lifetime}), the value must be gone`,
        expectGone,
      );
    }
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
  const calls = new ContractCalls(getStore);
  const putNew = (key: string, value: string, ttlMs = LONG_TTL_MS) =>
    calls.put(key, value, { expectedVersion: null, ttlMs });
  const putOn = (key: string, value: string, expectedVersion: number) =>
    calls.put(key, value, { expectedVersion, ttlMs: LONG_TTL_MS });

  describe('get and put', () => {
    test('a key never written reads as undefined', async () => {
      expectResult(await calls.get(newKey()), undefined, 'a key never written has no value');
    });

    test('a first write is version 1, read back with its value and the end of its lifetime', async () => {
      const key = newKey();
      const value = '{"accessToken":"tøken-✓-|-\\"quoted\\"-\\\\","scope":[]}';
      const before = Date.now();
      expectResult(await putNew(key, value), 1, 'a first write is version 1');
      const read = await calls.get(key);
      const stored = expectStored(read, { value, version: 1 }, 'the value written is read back');
      if (
        stored.expiresAt < before + LONG_TTL_MS - 1_000 ||
        stored.expiresAt > Date.now() + LONG_TTL_MS + 1_000
      ) {
        fail(read, `expiresAt about ${LONG_TTL_MS} ms from the write`, 'the end of its lifetime');
      }
    });

    test('a first write over a value is refused and changes nothing', async () => {
      const key = newKey();
      await putNew(key, 'first');
      expectResult(await putNew(key, 'second'), undefined, 'a value is already stored');
      expectStored(await calls.get(key), { value: 'first', version: 1 }, 'the refused write');
    });

    test('a write on the version read is the next version; on another version it is refused', async () => {
      const key = newKey();
      await putNew(key, 'v1');
      expectResult(await putOn(key, 'v2', 1), 2, 'a write on the stored version');
      expectResult(await putOn(key, 'stale', 1), undefined, 'version 1 is no longer stored');
      expectResult(await putOn(key, 'ahead', 5), undefined, 'version 5 was never stored');
      expectResult(await putOn(newKey(), 'none', 1), undefined, 'nothing is stored at that key');
      expectStored(await calls.get(key), { value: 'v2', version: 2 }, 'only the first write won');
    });

    test('a write sets the lifetime anew', async () => {
      const key = newKey();
      // Short beside LONG_TTL_MS, yet long enough to outlive the next call on a busy machine.
      await putNew(key, 'short', LONG_TTL_MS / 10);
      expectResult(await putOn(key, 'long', 1), 2, 'a write on the stored version');
      const read = await calls.get(key);
      const stored = read.rejected ? undefined : read.result;
      if (stored === undefined || !(stored.expiresAt > Date.now() + LONG_TTL_MS / 2)) {
        fail(
          read,
          `expiresAt about ${LONG_TTL_MS} ms from the second write`,
          'a write sets the lifetime anew',
        );
      }
    });

    test('keys are independent; a value of 64 KiB survives', async () => {
      const [a, b] = [newKey(), newKey()];
      const big = 'x'.repeat(64 * 1024);
      await putNew(a, big);
      await putNew(b, 'b');
      expectStored(await calls.get(a), { value: big, version: 1 }, 'a value of 64 KiB');
      expectStored(await calls.get(b), { value: 'b', version: 1 }, 'keys are independent');
    });
  });

  describe('lifetimes', () => {
    test('a value is gone once its lifetime ends, and its key can be written afresh', async () => {
      const key = newKey();
      expectResult(await putNew(key, 'brief', SHORT_TTL_MS), 1, 'a first write is version 1');
      await expectGone(calls, key, `ttlMs ${SHORT_TTL_MS}`);
      expectResult(await putNew(key, 'again'), 1, 'an expired key is written afresh');
    });

    test('renew gives a value more time, unchanged; a missing key cannot be renewed', async () => {
      const key = newKey();
      await putNew(key, 'kept', 2_000);
      expectResult(await calls.renew(key, LONG_TTL_MS), true, 'the value is stored');
      const read = await calls.get(key);
      const stored = expectStored(read, { value: 'kept', version: 1 }, 'renew changes nothing');
      if (stored.expiresAt <= Date.now() + LONG_TTL_MS / 2) {
        fail(read, `expiresAt about ${LONG_TTL_MS} ms from the renewal`, 'renew gives more time');
      }
      expectResult(await calls.renew(newKey(), LONG_TTL_MS), false, 'nothing is stored there');
      const brief = newKey();
      await putNew(brief, 'brief', LONG_TTL_MS);
      expectResult(await calls.renew(brief, SHORT_TTL_MS), true, 'the value is stored');
      await expectGone(calls, brief, `renewed with ttlMs ${SHORT_TTL_MS}`);
    });
  });

  describe('delete', () => {
    test('deletes a value; a missing key deletes nothing', async () => {
      const key = newKey();
      await putNew(key, 'v');
      expectResult(await calls.delete(key), true, 'the value is stored');
      expectResult(await calls.get(key), undefined, 'the value was deleted');
      expectResult(await calls.delete(key), false, 'nothing is stored any more');
    });

    test('with a version: only while the value still has it', async () => {
      const key = newKey();
      await putNew(key, 'v1');
      await putOn(key, 'v2', 1);
      expectResult(await calls.delete(key, 1), false, 'version 1 is no longer stored');
      expectStored(await calls.get(key), { value: 'v2', version: 2 }, 'the refused delete');
      expectResult(await calls.delete(key, 2), true, 'version 2 is stored');
      expectResult(await calls.get(key), undefined, 'the value was deleted');
    });
  });

  describe('concurrency', () => {
    /** Exactly one of `results` is `winner`, the others `loser`. */
    const oneWinner = <T>(results: Called<T>[], winner: T, loser: T, why: string): number => {
      const values = results.map((outcome) => resultOf(outcome, why));
      const winners = values.filter((result) => result === winner).length;
      if (winners !== 1 || values.some((result) => result !== winner && result !== loser)) {
        fail(
          `${results.length} concurrent ${results[0]!.call} resolved ${shown(values)}`,
          `exactly one ${shown(winner)}, the rest ${shown(loser)}`,
          why,
        );
      }
      return values.indexOf(winner);
    };

    test('50 concurrent first writes of one key: exactly one wins', async () => {
      const key = newKey();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => putNew(key, `writer-${i}`)),
      );
      const won = oneWinner(results, 1, undefined, 'a first write is compare-and-set');
      expectStored(await calls.get(key), { value: `writer-${won}`, version: 1 }, "the winner's");
    });

    test('50 concurrent writes on one version: exactly one wins, and its value is stored', async () => {
      const key = newKey();
      await putNew(key, 'base');
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => putOn(key, `writer-${i}`, 1)),
      );
      const won = oneWinner(results, 2, undefined, 'a write on a version is compare-and-set');
      expectStored(await calls.get(key), { value: `writer-${won}`, version: 2 }, "the winner's");
    });

    test('20 concurrent deletes on one version: exactly one deletes', async () => {
      const key = newKey();
      await putNew(key, 'v');
      const results = await Promise.all(Array.from({ length: 20 }, () => calls.delete(key, 1)));
      oneWinner(results, true, false, 'a delete on a version is compare-and-set');
    });
  });

  describe('arguments', () => {
    test('a wrong key, version or lifetime is a TypeError', async () => {
      const why = 'a wrong argument is refused before the backend is asked';
      expectRejection(await calls.get(''), TypeError, `${why}: an empty key`);
      expectRejection(await putNew('', 'v'), TypeError, `${why}: an empty key`);
      expectRejection(
        await calls.put(newKey(), 'v', { expectedVersion: 0, ttlMs: 1000 }),
        TypeError,
        `${why}: versions start at 1`,
      );
      expectRejection(
        await calls.put(newKey(), 'v', { expectedVersion: null, ttlMs: 0 }),
        TypeError,
        `${why}: a lifetime is at least 1 ms`,
      );
      expectRejection(await calls.delete(newKey(), 0), TypeError, `${why}: versions start at 1`);
      expectRejection(
        await calls.renew(newKey(), -1),
        TypeError,
        `${why}: a lifetime is at least 1 ms`,
      );
    });
  });

  describe('watch (optional: tested when the store has it)', () => {
    test('is told of a write and a delete of its key, and of nothing after unsubscribing', async () => {
      const watch = getStore().watch?.bind(getStore());
      if (watch === undefined) return; // the optional method is absent: nothing to hold it to
      const key = newKey();
      let told = 0;
      const unwatch = watch(key, () => (told += 1));
      const toldOf = async (change: Called<unknown>) => {
        const giveUpAt = Date.now() + EXPIRY_BOUND_MS;
        while (told === 0) {
          if (Date.now() >= giveUpAt) {
            fail(
              `store.watch(${JSON.stringify(key)}, onChange) was not called within ${EXPIRY_BOUND_MS} ms of ${change.call}`,
              'onChange to be called',
              'a watcher is told of every change of its key',
            );
          }
          await sleep(5);
        }
        told = 0;
      };
      await toldOf(await putNew(key, 'v'));
      await toldOf(await calls.delete(key));
      unwatch();
      const quiet = told;
      await putNew(key, 'again');
      const after = await calls.delete(key);
      if (told !== quiet) {
        fail(
          `store.watch(${JSON.stringify(key)}, onChange)'s onChange was called ${told - quiet} times after unsubscribing, by ${after.call}`,
          'no call',
          'the function watch() returned unsubscribes',
        );
      }
    });
  });
}
