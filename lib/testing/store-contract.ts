// The TokenStore contract as one test suite, for the package's own stores and for a studio's own:
// declared with the test runner's `describe`/`test` (Jest's globals by default), checked with
// node:assert, so it runs under Jest, Vitest, Mocha or node:test alike.
import { strict as assert } from 'node:assert';
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TokenRecord } from '../core/token-record';
import type { TokenStore } from '../core/token-store';
import { InvalidOptionError } from '../util/invalid-option-error';

/** Short lifetimes for the expiry tests, and a wait long enough to pass them on a busy machine. */
const SHORT_TTL_MS = 150;
const PAST_SHORT_TTL_MS = 400;
const LONG_TTL_MS = 60_000;

/** A session id no other test uses. */
export const newSessionId = (): string => `contract-${randomUUID()}`;

/** A record with unique random tokens (so a test can look for them verbatim). */
export function sampleRecord(version: number, overrides: Partial<TokenRecord> = {}): TokenRecord {
  const now = Date.now();
  return {
    accessToken: `at-${randomBytes(24).toString('base64url')}`,
    refreshToken: `rt-${randomBytes(24).toString('base64url')}`,
    accessExpiresAt: now + 7_200_000,
    refreshExpiresAt: now + 90 * 86_400_000,
    openId: `open-${randomBytes(8).toString('hex')}`,
    unionId: `union-${randomBytes(8).toString('hex')}`,
    scope: ['user_info', 'SCOPE'],
    version,
    obtainedAt: now,
    ...overrides,
  };
}

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
  /**
   * Also check the optional per-player index (`sessionsOf`, `deletePlayer`), which
   * `login.sessionsOf()` and `login.logoutPlayer()` need. Defaults to `true`.
   */
  playerIndex?: boolean;
  /**
   * Also check the optional failed-entry counter (`countInWindow`), which shares the
   * `entryFailureLimit` across processes. Defaults to `true`.
   */
  windowCounts?: boolean;
  /**
   * Also check the recommended methods (`extendLock`, `holdBackRefreshes`, `refreshHeldBackMs`,
   * `touch`): short refresh locks, a platform `Retry-After` shared by all processes, and active
   * sessions keeping their tokens. Defaults to `true`.
   */
  recommended?: boolean;
}

function globalTestFunctions(): ContractTestFunctions {
  const runner = globalThis as { describe?: unknown; test?: unknown; it?: unknown };
  const test = runner.test ?? runner.it;
  if (typeof runner.describe !== 'function' || typeof test !== 'function') {
    throw new InvalidOptionError(
      "tokenStoreContract(): no global `describe` and `test`: pass your runner's as `{ testFunctions: { describe, test } }`.",
      'testFunctions',
    );
  }
  return { describe: runner.describe, test } as ContractTestFunctions;
}

/**
 * Declares the TokenStore contract tests where it is called (inside a `describe` of your own):
 * compare-and-set writes, expiry, locks, one-time claims, concurrency, the recommended methods
 * (lock renewal, refresh holds, touch) and the per-player index.
 * `getStore` is called in each test, so a store built in your `beforeAll` is seen. Records,
 * locks and claims use random keys; the expiry tests wait about half a second.
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
  const putNew = async (sessionId: string, record: TokenRecord, ttlMs = LONG_TTL_MS) =>
    getStore().put(sessionId, record, { expectedVersion: null, ttlMs });

  describe('get and put', () => {
    test('a session without a record reads as undefined', async () => {
      assert.equal(await getStore().get(newSessionId()), undefined);
    });

    test('a first write (expected version null) is stored and read back field for field', async () => {
      const sessionId = newSessionId();
      const record = sampleRecord(1);
      assert.equal(await putNew(sessionId, record), true);
      assert.deepEqual(await getStore().get(sessionId), record);
    });

    test('a record without unionId reads back without one, and unicode survives', async () => {
      const sessionId = newSessionId();
      const { unionId: _unionId, ...record } = sampleRecord(1, {
        accessToken: 'tøken-✓-|-"quoted"-\\',
        scope: [],
      });
      assert.equal(await putNew(sessionId, record), true);
      const read = await getStore().get(sessionId);
      assert.deepEqual(read, record);
      assert.ok(!Object.hasOwn(read!, 'unionId'));
    });

    test('a first write over an existing record is refused and leaves it unchanged', async () => {
      const sessionId = newSessionId();
      const first = sampleRecord(1);
      await putNew(sessionId, first);
      assert.equal(await putNew(sessionId, sampleRecord(1)), false);
      assert.deepEqual(await getStore().get(sessionId), first);
    });

    test('compare-and-set: the expected version writes, a stale one is refused', async () => {
      const sessionId = newSessionId();
      await putNew(sessionId, sampleRecord(1));
      const second = sampleRecord(2);
      assert.equal(
        await getStore().put(sessionId, second, { expectedVersion: 1, ttlMs: LONG_TTL_MS }),
        true,
      );
      assert.deepEqual(await getStore().get(sessionId), second);
      const stale = sampleRecord(2);
      assert.equal(
        await getStore().put(sessionId, stale, { expectedVersion: 1, ttlMs: LONG_TTL_MS }),
        false,
      );
      assert.deepEqual(await getStore().get(sessionId), second);
    });

    test('a version 1 does not match a stored version 11 (versions compare whole)', async () => {
      const sessionId = newSessionId();
      const eleven = sampleRecord(11);
      await putNew(sessionId, eleven);
      assert.equal(
        await getStore().put(sessionId, sampleRecord(2), {
          expectedVersion: 1,
          ttlMs: LONG_TTL_MS,
        }),
        false,
      );
      assert.deepEqual(await getStore().get(sessionId), eleven);
    });

    test('an expected version on a session without a record writes nothing', async () => {
      const sessionId = newSessionId();
      assert.equal(
        await getStore().put(sessionId, sampleRecord(2), {
          expectedVersion: 1,
          ttlMs: LONG_TTL_MS,
        }),
        false,
      );
      assert.equal(await getStore().get(sessionId), undefined);
    });

    test("sessions do not see each other's records", async () => {
      const [a, b] = [newSessionId(), newSessionId()];
      const recordA = sampleRecord(1);
      await putNew(a, recordA);
      assert.equal(await getStore().get(b), undefined);
      assert.deepEqual(await getStore().get(a), recordA);
    });

    test('changing a record after put, or a record read, does not change what is stored', async () => {
      const sessionId = newSessionId();
      const record = sampleRecord(1);
      const original = { ...record, scope: [...record.scope] };
      await putNew(sessionId, record);
      record.accessToken = 'changed';
      record.scope.push('admin');
      const read = (await getStore().get(sessionId))!;
      // A store may hand out a copy, or a frozen record (RedisTokenStore's cache): either way the
      // change does not reach what is stored.
      try {
        read.refreshToken = 'changed';
        read.scope.push('admin');
      } catch (error) {
        assert.ok(error instanceof TypeError);
        assert.ok(Object.isFrozen(read) && Object.isFrozen(read.scope));
      }
      assert.deepEqual(await getStore().get(sessionId), original);
    });

    test('wrong arguments are TypeErrors, not outages', async () => {
      const sessionId = newSessionId();
      await assert.rejects(
        getStore().put(sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: 0 }),
        TypeError,
      );
      await assert.rejects(
        getStore().put(sessionId, sampleRecord(0), { expectedVersion: null, ttlMs: 1000 }),
        TypeError,
      );
      await assert.rejects(getStore().get(''), TypeError);
      assert.equal(await getStore().get(sessionId), undefined);
    });
  });

  describe('delete', () => {
    test('without a version it deletes whatever is stored', async () => {
      const sessionId = newSessionId();
      await putNew(sessionId, sampleRecord(3));
      assert.equal(await getStore().delete(sessionId), true);
      assert.equal(await getStore().get(sessionId), undefined);
      assert.equal(await getStore().delete(sessionId), false);
    });

    test('with a version it deletes only that version', async () => {
      const sessionId = newSessionId();
      const record = sampleRecord(2);
      await putNew(sessionId, record);
      assert.equal(await getStore().delete(sessionId, { expectedVersion: 1 }), false);
      assert.deepEqual(await getStore().get(sessionId), record);
      assert.equal(await getStore().delete(sessionId, { expectedVersion: 2 }), true);
      assert.equal(await getStore().get(sessionId), undefined);
    });
  });

  describe('expiry', () => {
    test('a record is gone after its TTL while a longer-lived one stays', async () => {
      const [short, long] = [newSessionId(), newSessionId()];
      const kept = sampleRecord(1);
      await putNew(short, sampleRecord(1), SHORT_TTL_MS);
      await putNew(long, kept, LONG_TTL_MS);
      await sleep(PAST_SHORT_TTL_MS);
      assert.equal(await getStore().get(short), undefined);
      assert.deepEqual(await getStore().get(long), kept);
      // An expired record counts as absent for compare-and-set too.
      assert.equal(await putNew(short, sampleRecord(1)), true);
    });
  });

  describe('locks', () => {
    test('a lock is exclusive and released only by its owner', async () => {
      const sessionId = newSessionId();
      const owner = await getStore().acquireLock(sessionId, LONG_TTL_MS);
      assert.equal(typeof owner, 'string');
      assert.ok(owner!.length >= 16);
      assert.equal(await getStore().acquireLock(sessionId, LONG_TTL_MS), undefined);
      assert.equal(await getStore().releaseLock(sessionId, 'someone-else'), false);
      assert.equal(await getStore().acquireLock(sessionId, LONG_TTL_MS), undefined);
      assert.equal(await getStore().releaseLock(sessionId, owner!), true);
      assert.equal(await getStore().releaseLock(sessionId, owner!), false);
      const next = await getStore().acquireLock(sessionId, LONG_TTL_MS);
      assert.equal(typeof next, 'string');
      assert.notEqual(next, owner);
    });

    test('locks of different sessions are independent, and a lock does not block writes', async () => {
      const [a, b] = [newSessionId(), newSessionId()];
      assert.equal(typeof (await getStore().acquireLock(a, LONG_TTL_MS)), 'string');
      assert.equal(typeof (await getStore().acquireLock(b, LONG_TTL_MS)), 'string');
      assert.equal(await putNew(a, sampleRecord(1)), true);
    });

    test('the lock of an owner that died expires, and its late release frees nothing', async () => {
      const sessionId = newSessionId();
      const dead = await getStore().acquireLock(sessionId, SHORT_TTL_MS);
      assert.equal(typeof dead, 'string');
      await sleep(PAST_SHORT_TTL_MS);
      const next = await getStore().acquireLock(sessionId, LONG_TTL_MS);
      assert.equal(typeof next, 'string');
      assert.equal(await getStore().releaseLock(sessionId, dead!), false);
      assert.equal(await getStore().acquireLock(sessionId, LONG_TTL_MS), undefined);
    });
  });

  if (options.recommended !== false) {
    describe('recommended: extendLock, holdBackRefreshes, touch', () => {
      test('the store has extendLock, holdBackRefreshes, refreshHeldBackMs and touch', async () => {
        const store = getStore();
        const hint = 'these are recommended: pass { recommended: false } to leave them out';
        for (const method of [
          'extendLock',
          'holdBackRefreshes',
          'refreshHeldBackMs',
          'touch',
        ] as const) {
          assert.equal(typeof store[method], 'function', `no ${method}(); ${hint}`);
        }
      });

      test('only the owner extends a lock, and an extended lock outlives its first lifetime', async () => {
        const store = getStore();
        const sessionId = newSessionId();
        const owner = await store.acquireLock(sessionId, SHORT_TTL_MS);
        assert.equal(await store.extendLock!(sessionId, 'someone-else', LONG_TTL_MS), false);
        assert.equal(await store.extendLock!(sessionId, owner!, LONG_TTL_MS), true);
        await sleep(PAST_SHORT_TTL_MS);
        assert.equal(await store.acquireLock(sessionId, LONG_TTL_MS), undefined);
        assert.equal(await store.releaseLock(sessionId, owner!), true);
        // A lock that expired is not brought back by its former owner.
        const lapsed = await store.acquireLock(sessionId, SHORT_TTL_MS);
        await sleep(PAST_SHORT_TTL_MS);
        assert.equal(await store.extendLock!(sessionId, lapsed!, LONG_TTL_MS), false);
      });

      test('a refresh hold applies to its record version, for its lifetime', async () => {
        const store = getStore();
        const sessionId = newSessionId();
        assert.equal(await store.refreshHeldBackMs!(sessionId, 1), 0);
        await store.holdBackRefreshes!(sessionId, 1, LONG_TTL_MS);
        const left = await store.refreshHeldBackMs!(sessionId, 1);
        assert.ok(left > LONG_TTL_MS - 5000, `a fresh hold has ${left} ms left`);
        assert.ok(left <= LONG_TTL_MS, `a fresh hold has ${left} ms left`);
        assert.equal(await store.refreshHeldBackMs!(sessionId, 2), 0);
        await store.holdBackRefreshes!(sessionId, 2, SHORT_TTL_MS);
        await sleep(PAST_SHORT_TTL_MS);
        assert.equal(await store.refreshHeldBackMs!(sessionId, 2), 0);
      });

      test('touch gives an existing record a new lifetime, and a missing one none', async () => {
        const store = getStore();
        const sessionId = newSessionId();
        const record = sampleRecord(1);
        await putNew(sessionId, record, SHORT_TTL_MS);
        assert.equal(await store.touch!(sessionId, record.openId, LONG_TTL_MS), true);
        await sleep(PAST_SHORT_TTL_MS);
        assert.deepEqual(await store.get(sessionId), record);
        if (options.playerIndex !== false) {
          assert.equal(await store.sessionsOf!(record.openId), 1);
        }
        assert.equal(await store.touch!(newSessionId(), record.openId, LONG_TTL_MS), false);
      });
    });
  }

  describe('claimOnce', () => {
    test('a key is claimed once; other keys are independent; a claim expires', async () => {
      const key = `claim-${randomUUID()}`;
      const shortKey = `claim-${randomUUID()}`;
      assert.equal(await getStore().claimOnce(key, LONG_TTL_MS), true);
      assert.equal(await getStore().claimOnce(key, LONG_TTL_MS), false);
      assert.equal(await getStore().claimOnce(shortKey, SHORT_TTL_MS), true);
      await sleep(PAST_SHORT_TTL_MS);
      assert.equal(await getStore().claimOnce(shortKey, LONG_TTL_MS), true);
      assert.equal(await getStore().claimOnce(key, LONG_TTL_MS), false);
    });
  });

  if (options.windowCounts !== false)
    describe('countInWindow (optional: pass { windowCounts: false } to leave it out)', () => {
      test('the store has countInWindow', async () => {
        assert.equal(
          typeof getStore().countInWindow,
          'function',
          'no countInWindow(); pass { windowCounts: false } to leave it out',
        );
      });

      const count = (key: string, increment: 0 | 1, windowMs = LONG_TTL_MS) =>
        getStore().countInWindow!(key, increment, windowMs);

      test('reads 0 without opening a window, counts up, and the window ends with the counter', async () => {
        const key = `count-${randomUUID()}`;
        assert.deepEqual(await count(key, 0), { count: 0, resetInMs: 0 });
        assert.deepEqual(await count(key, 0), { count: 0, resetInMs: 0 });
        const first = await count(key, 1);
        assert.equal(first.count, 1);
        assert.ok(first.resetInMs > 0);
        assert.ok(first.resetInMs <= LONG_TTL_MS);
        assert.equal((await count(key, 1)).count, 2);
        assert.equal((await count(key, 0)).count, 2);
        const short = `count-${randomUUID()}`;
        await count(short, 1, SHORT_TTL_MS);
        await count(short, 1, SHORT_TTL_MS);
        await sleep(PAST_SHORT_TTL_MS);
        assert.deepEqual(await count(short, 0, SHORT_TTL_MS), { count: 0, resetInMs: 0 });
        assert.equal((await count(short, 1, SHORT_TTL_MS)).count, 1);
      });

      test('a later count does not stretch the window; 30 concurrent counts are all kept', async () => {
        const key = `count-${randomUUID()}`;
        const first = await count(key, 1, 5_000);
        await sleep(50);
        const later = await count(key, 1, 60_000);
        assert.ok(later.resetInMs <= first.resetInMs);
        const results = await Promise.all(Array.from({ length: 30 }, () => count(key, 1)));
        assert.deepEqual(
          results.map((r) => r.count).sort((a, b) => a - b),
          Array.from({ length: 30 }, (_, i) => i + 3),
        );
      });

      test('refuses a bad key, increment or window with a TypeError', async () => {
        await assert.rejects(count('', 1), TypeError);
        await assert.rejects(getStore().countInWindow!('k', 2 as 1, 1000), TypeError);
        await assert.rejects(count('k', 1, 0), TypeError);
      });
    });

  describe('concurrency', () => {
    test('50 concurrent compare-and-set writers on one version: exactly one wins', async () => {
      const sessionId = newSessionId();
      await putNew(sessionId, sampleRecord(1));
      const candidates = Array.from({ length: 50 }, () => sampleRecord(2));
      const results = await Promise.all(
        candidates.map((record) =>
          getStore().put(sessionId, record, { expectedVersion: 1, ttlMs: LONG_TTL_MS }),
        ),
      );
      assert.equal(results.filter(Boolean).length, 1);
      assert.deepEqual(await getStore().get(sessionId), candidates[results.indexOf(true)]);
    });

    test('50 concurrent first writes on one session: exactly one wins', async () => {
      const sessionId = newSessionId();
      const results = await Promise.all(
        Array.from({ length: 50 }, () => putNew(sessionId, sampleRecord(1))),
      );
      assert.equal(results.filter(Boolean).length, 1);
    });

    test('20 concurrent lock takers: exactly one owner', async () => {
      const sessionId = newSessionId();
      const owners = await Promise.all(
        Array.from({ length: 20 }, () => getStore().acquireLock(sessionId, LONG_TTL_MS)),
      );
      assert.equal(owners.filter((owner) => owner !== undefined).length, 1);
    });

    test('20 concurrent claims of one key: exactly one succeeds', async () => {
      const key = `claim-${randomUUID()}`;
      const results = await Promise.all(
        Array.from({ length: 20 }, () => getStore().claimOnce(key, LONG_TTL_MS)),
      );
      assert.equal(results.filter(Boolean).length, 1);
    });
  });

  if (options.playerIndex === false) return;
  describe('per-player index (sessionsOf, deletePlayer)', () => {
    const player = (): string => `player-${randomUUID()}`;

    test('the store has sessionsOf and deletePlayer', async () => {
      const store = getStore();
      const hint = 'the per-player index is optional: pass { playerIndex: false } to leave it out';
      assert.equal(typeof store.sessionsOf, 'function', `no sessionsOf(); ${hint}`);
      assert.equal(typeof store.deletePlayer, 'function', `no deletePlayer(); ${hint}`);
    });

    test("counts a player's live sessions, pruning deleted and expired ones", async () => {
      const store = getStore();
      const ada = player();
      const bo = player();
      const [a1, a2, a3, b1] = [newSessionId(), newSessionId(), newSessionId(), newSessionId()];
      await putNew(a1, sampleRecord(1, { openId: ada }));
      await putNew(a2, sampleRecord(1, { openId: ada }));
      await putNew(a3, sampleRecord(1, { openId: ada }), SHORT_TTL_MS);
      await putNew(b1, sampleRecord(1, { openId: bo }));
      assert.equal(await store.sessionsOf!(ada), 3);
      assert.equal(await store.sessionsOf!(bo), 1);
      await store.delete(a1);
      await sleep(PAST_SHORT_TTL_MS);
      assert.equal(await store.sessionsOf!(ada), 1);
      // A refresh (a compare-and-set rewrite) does not count the session twice.
      const current = await store.get(a2);
      await store.put(a2, { ...current!, version: 2 }, { expectedVersion: 1, ttlMs: LONG_TTL_MS });
      assert.equal(await store.sessionsOf!(ada), 1);
    });

    test('deletePlayer ends every session of that player and no other', async () => {
      const store = getStore();
      const ada = player();
      const bo = player();
      const adaSessions = [newSessionId(), newSessionId(), newSessionId()];
      const boSession = newSessionId();
      for (const sessionId of adaSessions)
        await putNew(sessionId, sampleRecord(1, { openId: ada }));
      await putNew(boSession, sampleRecord(1, { openId: bo }));
      assert.equal(await store.deletePlayer!(ada), 3);
      for (const sessionId of adaSessions) assert.equal(await store.get(sessionId), undefined);
      assert.notEqual(await store.get(boSession), undefined);
      assert.equal(await store.sessionsOf!(ada), 0);
      assert.equal(await store.deletePlayer!(ada), 0);
    });

    test('a login after deletePlayer is kept; a record deleted with its openId leaves the index', async () => {
      const store = getStore();
      const ada = player();
      await store.deletePlayer!(ada);
      const [kept, gone] = [newSessionId(), newSessionId()];
      assert.equal(await putNew(kept, sampleRecord(1, { openId: ada })), true);
      assert.equal(await putNew(gone, sampleRecord(1, { openId: ada })), true);
      assert.equal(await store.delete(gone, { openId: ada }), true);
      assert.equal(await store.sessionsOf!(ada), 1);
      assert.notEqual(await store.get(kept), undefined);
    });
  });
}
