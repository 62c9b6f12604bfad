// The store engine (lib/core/store-engine.ts) as one test suite, part by part (records, locks,
// counters, an entry's checks, and changes when the engine has them): what the package works with,
// whether a shipped store makes it (RedisTokenStore) or it is derived from the public contract
// (MemoryTokenStore, a studio's own store). Internal: the public contract's suite is
// lib/testing/store-contract.ts.
import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TokenRecord } from '../../lib/core/token-record';
import type { EntryBegin, RecordRead, StoreEngine } from '../../lib/core/store-engine';
import { beginEntry, ENTRY_BUDGET_WINDOW_MS } from '../../lib/core/entry-begin';
import { withinLifetime } from './within-lifetime';
import { MAX_INDEXED_LOGINS } from '../../lib/core/store-keys';
import { newSessionKey, sampleRecord } from '../../lib/testing/samples';

/**
 * Lifetimes for the expiry tests. No test sleeps for a fixed time: each polls the store until what
 * should end has ended (the store's own clock decides), so a test takes about the lifetime it waits
 * for, and a store that never expires anything fails when the poll gives up.
 *
 * - EXPIRING_TTL_MS: a lifetime meant to end during the test, with nothing to do before it ends.
 * - SHORT_TTL_MS: a lifetime that must outlast a step or two (a renew, an extend) first, on a busy
 *   machine, and then end. Steps that still came too late are tried again (withinLifetime).
 * - EXPIRY_POLL_MS: how long a poll waits for a lifetime to end before the test fails.
 */
const EXPIRING_TTL_MS = 40;
const SHORT_TTL_MS = 1000;
const EXPIRY_POLL_MS = 5000;
const LONG_TTL_MS = 60_000;

/**
 * Reads `read()` every 10 ms until `done(value)` holds, or for `timeoutMs` at most; resolves
 * the last value read either way, for the caller to assert on (so a store that never gets there
 * fails on the assertion, with the value it had).
 */
async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = EXPIRY_POLL_MS,
): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > giveUpAt) return value;
    await sleep(10);
  }
}

/** The record of a read that must have found one. */
function found(read: RecordRead): TokenRecord {
  assert.equal(read.status, 'found', `expected a record, the read was ${read.status}`);
  return (read as Extract<RecordRead, { status: 'found' }>).record;
}

/** Declares the engine's tests where it is called; `getStore` is called in each test. */
export function storeEngineContract(getStore: () => StoreEngine): void {
  /** Polls until what should have ended has ended (see pollUntil). */
  const untilEnded = <T>(read: () => Promise<T>, done: (value: T) => boolean) =>
    pollUntil(read, done);
  const records = () => getStore().records;
  const locks = () => getStore().locks;
  const counters = () => getStore().counters;
  const putNew = async (sessionKey: string, record: TokenRecord, ttlMs = LONG_TTL_MS) =>
    records().put(sessionKey, record, { expectedVersion: null, ttlMs });
  const read = async (sessionKey: string) => records().get(sessionKey);
  const player = (): string => `player-${randomUUID()}`;

  describe('records: get and put', () => {
    test('a session without a record reads as absent', async () => {
      assert.deepEqual(await read(newSessionKey()), { status: 'absent' });
    });

    test('a first write (expected version null) is stored and read back field for field', async () => {
      const sessionKey = newSessionKey();
      const record = sampleRecord(1);
      assert.equal(await putNew(sessionKey, record), true);
      assert.deepEqual(await read(sessionKey), { status: 'found', record });
    });

    test('a record without unionId reads back without one, and unicode survives', async () => {
      const sessionKey = newSessionKey();
      const { unionId: _unionId, ...record } = sampleRecord(1, {
        accessToken: 'tøken-✓-|-"quoted"-\\',
        scope: [],
      });
      assert.equal(await putNew(sessionKey, record), true);
      const stored = found(await read(sessionKey));
      assert.deepEqual(stored, record);
      assert.ok(!Object.hasOwn(stored, 'unionId'));
    });

    test('a first write over an existing record is refused and leaves it unchanged', async () => {
      const sessionKey = newSessionKey();
      const first = sampleRecord(1);
      await putNew(sessionKey, first);
      assert.equal(await putNew(sessionKey, sampleRecord(1)), false);
      assert.deepEqual(found(await read(sessionKey)), first);
    });

    test('compare-and-set: the expected version writes, a stale one is refused', async () => {
      const sessionKey = newSessionKey();
      await putNew(sessionKey, sampleRecord(1));
      const second = sampleRecord(2);
      const cas = { expectedVersion: 1, ttlMs: LONG_TTL_MS };
      assert.equal(await records().put(sessionKey, second, cas), true);
      assert.deepEqual(found(await read(sessionKey)), second);
      assert.equal(await records().put(sessionKey, sampleRecord(2), cas), false);
      assert.deepEqual(found(await read(sessionKey)), second);
    });

    test('a version 1 does not match a stored version 11 (versions compare whole)', async () => {
      const sessionKey = newSessionKey();
      const eleven = sampleRecord(11);
      await putNew(sessionKey, eleven);
      const cas = { expectedVersion: 1, ttlMs: LONG_TTL_MS };
      assert.equal(await records().put(sessionKey, sampleRecord(2), cas), false);
      assert.deepEqual(found(await read(sessionKey)), eleven);
    });

    test('an expected version on a session without a record writes nothing', async () => {
      const sessionKey = newSessionKey();
      const cas = { expectedVersion: 1, ttlMs: LONG_TTL_MS };
      assert.equal(await records().put(sessionKey, sampleRecord(2), cas), false);
      assert.equal((await read(sessionKey)).status, 'absent');
    });

    test("sessions do not see each other's records", async () => {
      const [a, b] = [newSessionKey(), newSessionKey()];
      const recordA = sampleRecord(1);
      await putNew(a, recordA);
      assert.equal((await read(b)).status, 'absent');
      assert.deepEqual(found(await read(a)), recordA);
    });

    test('changing a record after put, or a record read, does not change what is stored', async () => {
      const sessionKey = newSessionKey();
      const record = sampleRecord(1);
      const original = { ...record, scope: [...record.scope] };
      await putNew(sessionKey, record);
      record.accessToken = 'changed';
      record.scope.push('admin');
      const stored = found(await read(sessionKey));
      // A store may hand out a copy, or a frozen record (RedisTokenStore's cache): either way the
      // change does not reach what is stored.
      try {
        stored.refreshToken = 'changed';
        stored.scope.push('admin');
      } catch (error) {
        assert.ok(error instanceof TypeError);
        assert.ok(Object.isFrozen(stored) && Object.isFrozen(stored.scope));
      }
      assert.deepEqual(found(await read(sessionKey)), original);
    });

    test('wrong arguments are TypeErrors, not outages', async () => {
      const sessionKey = newSessionKey();
      await assert.rejects(
        records().put(sessionKey, sampleRecord(1), { expectedVersion: null, ttlMs: 0 }),
        TypeError,
      );
      await assert.rejects(
        records().put(sessionKey, sampleRecord(0), { expectedVersion: null, ttlMs: 1000 }),
        TypeError,
      );
      await assert.rejects(records().get(''), TypeError);
      assert.equal((await read(sessionKey)).status, 'absent');
    });
  });

  describe('records: delete, expiry, renew', () => {
    test('delete without a version deletes whatever is stored', async () => {
      const sessionKey = newSessionKey();
      await putNew(sessionKey, sampleRecord(3));
      assert.equal(await records().delete(sessionKey), true);
      assert.equal((await read(sessionKey)).status, 'absent');
      assert.equal(await records().delete(sessionKey), false);
    });

    test('delete with a version deletes only that version', async () => {
      const sessionKey = newSessionKey();
      const record = sampleRecord(2);
      await putNew(sessionKey, record);
      assert.equal(await records().delete(sessionKey, { expectedVersion: 1 }), false);
      assert.deepEqual(found(await read(sessionKey)), record);
      assert.equal(await records().delete(sessionKey, { expectedVersion: 2 }), true);
      assert.equal((await read(sessionKey)).status, 'absent');
    });

    test('a record is gone after its TTL while a longer-lived one stays', async () => {
      const [short, long] = [newSessionKey(), newSessionKey()];
      const kept = sampleRecord(1);
      await putNew(short, sampleRecord(1), EXPIRING_TTL_MS);
      await putNew(long, kept, LONG_TTL_MS);
      const expired = await untilEnded(
        () => read(short),
        (r) => r.status === 'absent',
      );
      assert.equal(expired.status, 'absent', 'the record outlived its TTL');
      assert.deepEqual(found(await read(long)), kept);
      // An expired record counts as absent for compare-and-set too.
      assert.equal(await putNew(short, sampleRecord(1)), true);
    });

    test('renew gives an existing record (and its index entry) a new lifetime, a missing one none', async () => {
      const { sessionKey, record, renewed } = await withinLifetime(SHORT_TTL_MS, async () => {
        const sessionKey = newSessionKey();
        const record = sampleRecord(1);
        await putNew(sessionKey, record, SHORT_TTL_MS);
        const renewed = await records().renew(sessionKey, record.openId, LONG_TTL_MS);
        return { sessionKey, record, renewed };
      });
      assert.equal(renewed, true);
      // A witness written after it with the same first lifetime: once the witness is gone, so is
      // the record's first lifetime.
      const witness = newSessionKey();
      await putNew(witness, sampleRecord(1), SHORT_TTL_MS);
      const witnessRead = await untilEnded(
        () => read(witness),
        (r) => r.status === 'absent',
      );
      assert.equal(witnessRead.status, 'absent', 'the witness outlived its TTL');
      assert.deepEqual(found(await read(sessionKey)), record);
      const logins = await records().loginsOf(record.openId);
      assert.deepEqual(
        logins.map((login) => login.sessionKey),
        [sessionKey],
      );
      assert.equal(await records().renew(newSessionKey(), record.openId, LONG_TTL_MS), false);
    });
  });

  describe('records: the player index, deletePlayer, the login generation', () => {
    test("lists a player's live logins freshest first, pruning deleted and expired ones", async () => {
      // a3 is listed if read within its short lifetime.
      const { ada, bo, a1, a2, a3, logins } = await withinLifetime(SHORT_TTL_MS, async () => {
        const ada = player();
        const bo = player();
        const [a1, a2, a3, b1] = [
          newSessionKey(),
          newSessionKey(),
          newSessionKey(),
          newSessionKey(),
        ];
        await putNew(a1, sampleRecord(1, { openId: ada }), LONG_TTL_MS);
        await putNew(a2, sampleRecord(1, { openId: ada }), LONG_TTL_MS * 2);
        await putNew(a3, sampleRecord(1, { openId: ada }), SHORT_TTL_MS);
        await putNew(b1, sampleRecord(1, { openId: bo }));
        return { ada, bo, a1, a2, a3, logins: await records().loginsOf(ada) };
      });
      assert.deepEqual(
        logins.map((login) => login.sessionKey),
        [a2, a1, a3],
      );
      const now = Date.now();
      assert.ok(
        logins[0]!.expiresAt > now + LONG_TTL_MS && logins[0]!.expiresAt <= now + LONG_TTL_MS * 2,
      );
      assert.equal((await records().loginsOf(bo)).length, 1);
      await records().delete(a1);
      const left = await untilEnded(
        async () => (await records().loginsOf(ada)).map((login) => login.sessionKey),
        (sessionKeys) => !sessionKeys.includes(a3),
      );
      assert.deepEqual(left, [a2]);
      // A refresh (a compare-and-set rewrite) does not list the session twice.
      const current = found(await read(a2));
      await records().put(
        a2,
        { ...current, version: 2 },
        { expectedVersion: 1, ttlMs: LONG_TTL_MS },
      );
      assert.equal((await records().loginsOf(ada)).length, 1);
    });

    test(`a player's index keeps ${MAX_INDEXED_LOGINS} logins: the next ends the oldest, never itself`, async () => {
      const ada = player();
      const sessionKeys = Array.from({ length: MAX_INDEXED_LOGINS + 1 }, () => newSessionKey());
      // Each login outlives the one before, so the first is the oldest; the last lives least.
      for (const [at, sessionKey] of sessionKeys.slice(0, -1).entries())
        await putNew(sessionKey, sampleRecord(1, { openId: ada }), LONG_TTL_MS + at * 10);
      const last = sessionKeys.at(-1)!;
      assert.equal(await putNew(last, sampleRecord(1, { openId: ada }), LONG_TTL_MS / 2), true);
      assert.equal((await read(sessionKeys[0]!)).status, 'absent');
      assert.equal((await read(sessionKeys[1]!)).status, 'found');
      assert.equal((await read(last)).status, 'found');
      const listed = (await records().loginsOf(ada)).map((login) => login.sessionKey);
      assert.equal(listed.length, MAX_INDEXED_LOGINS);
      assert.ok(!listed.includes(sessionKeys[0]!) && listed.includes(last));
    });

    test('deletePlayer ends every login of that player and no other', async () => {
      const ada = player();
      const bo = player();
      const adaSessions = [newSessionKey(), newSessionKey(), newSessionKey()];
      const boSession = newSessionKey();
      for (const sessionKey of adaSessions)
        await putNew(sessionKey, sampleRecord(1, { openId: ada }));
      await putNew(boSession, sampleRecord(1, { openId: bo }));
      assert.equal(await records().deletePlayer(ada), 3);
      for (const sessionKey of adaSessions) assert.equal((await read(sessionKey)).status, 'absent');
      assert.equal((await read(boSession)).status, 'found');
      assert.deepEqual(await records().loginsOf(ada), []);
      assert.equal(await records().deletePlayer(ada), 0);
    });

    test('a login after deletePlayer is kept; a deleted record is no login of the player', async () => {
      const ada = player();
      await records().deletePlayer(ada);
      const [kept, gone] = [newSessionKey(), newSessionKey()];
      assert.equal(await putNew(kept, sampleRecord(1, { openId: ada })), true);
      assert.equal(await putNew(gone, sampleRecord(1, { openId: ada })), true);
      assert.equal(await records().delete(gone), true);
      assert.equal((await records().loginsOf(ada)).length, 1);
      assert.equal((await read(kept)).status, 'found');
    });

    test('a login whose generation was read before a deletePlayer of its player is refused', async () => {
      const ada = player();
      const bo = player();
      const generation = await records().loginGeneration();
      assert.equal(typeof generation, 'string');
      await records().deletePlayer(ada);
      const options = { expectedVersion: null, ttlMs: LONG_TTL_MS, loginGeneration: generation };
      const refused = newSessionKey();
      assert.equal(await records().put(refused, sampleRecord(1, { openId: ada }), options), false);
      assert.equal((await read(refused)).status, 'absent');
      assert.deepEqual(await records().loginsOf(ada), []);
      // Another player's login under way is not affected, nor is a login that began after.
      assert.equal(
        await records().put(newSessionKey(), sampleRecord(1, { openId: bo }), options),
        true,
      );
      const after = { ...options, loginGeneration: await records().loginGeneration() };
      assert.equal(
        await records().put(newSessionKey(), sampleRecord(1, { openId: ada }), after),
        true,
      );
    });
  });

  describe('locks', () => {
    test('a lock is exclusive and released only by its owner', async () => {
      const sessionKey = newSessionKey();
      const owner = await locks().acquire(sessionKey, LONG_TTL_MS);
      assert.equal(typeof owner, 'string');
      assert.ok(owner!.length >= 16);
      assert.equal(await locks().acquire(sessionKey, LONG_TTL_MS), undefined);
      assert.equal(await locks().release(sessionKey, 'someone-else'), false);
      assert.equal(await locks().acquire(sessionKey, LONG_TTL_MS), undefined);
      assert.equal(await locks().release(sessionKey, owner!), true);
      assert.equal(await locks().release(sessionKey, owner!), false);
      const next = await locks().acquire(sessionKey, LONG_TTL_MS);
      assert.equal(typeof next, 'string');
      assert.notEqual(next, owner);
    });

    test('locks of different sessions are independent, and a lock does not block writes', async () => {
      const [a, b] = [newSessionKey(), newSessionKey()];
      assert.equal(typeof (await locks().acquire(a, LONG_TTL_MS)), 'string');
      assert.equal(typeof (await locks().acquire(b, LONG_TTL_MS)), 'string');
      assert.equal(await putNew(a, sampleRecord(1)), true);
    });

    test('the lock of an owner that died expires, and its late release frees nothing', async () => {
      const sessionKey = newSessionKey();
      const dead = await locks().acquire(sessionKey, EXPIRING_TTL_MS);
      assert.equal(typeof dead, 'string');
      const next = await untilEnded(
        () => locks().acquire(sessionKey, LONG_TTL_MS),
        (owner) => owner !== undefined,
      );
      assert.equal(typeof next, 'string', 'the lock outlived its TTL');
      assert.equal(await locks().release(sessionKey, dead!), false);
      assert.equal(await locks().acquire(sessionKey, LONG_TTL_MS), undefined);
    });

    test('only the owner extends a lock, and an extended lock outlives its first lifetime', async () => {
      const { sessionKey, owner, byOther, byOwner } = await withinLifetime(
        SHORT_TTL_MS,
        async () => {
          const sessionKey = newSessionKey();
          const owner = await locks().acquire(sessionKey, SHORT_TTL_MS);
          const byOther = await locks().extend(sessionKey, 'someone-else', LONG_TTL_MS);
          const byOwner = await locks().extend(sessionKey, owner!, LONG_TTL_MS);
          return { sessionKey, owner, byOther, byOwner };
        },
      );
      assert.equal(byOther, false);
      assert.equal(byOwner, true);
      // Witness locks taken after a lock, with the same lifetime: once a witness lock can be taken
      // again, that lock's lifetime is over too.
      const pastLifetimeOf = async (ttlMs: number) => {
        const witness = newSessionKey();
        assert.equal(typeof (await locks().acquire(witness, ttlMs)), 'string');
        const again = await untilEnded(
          () => locks().acquire(witness, LONG_TTL_MS),
          (taken) => taken !== undefined,
        );
        assert.equal(typeof again, 'string', 'the witness lock outlived its TTL');
      };
      await pastLifetimeOf(SHORT_TTL_MS);
      assert.equal(await locks().acquire(sessionKey, LONG_TTL_MS), undefined);
      assert.equal(await locks().release(sessionKey, owner!), true);
      // A lock that expired is not brought back by its former owner.
      const lapsed = await locks().acquire(sessionKey, EXPIRING_TTL_MS);
      assert.equal(typeof lapsed, 'string');
      await pastLifetimeOf(EXPIRING_TTL_MS);
      assert.equal(await locks().extend(sessionKey, lapsed!, LONG_TTL_MS), false);
      assert.equal(typeof (await locks().acquire(sessionKey, LONG_TTL_MS)), 'string');
    });

    test('a refresh hold applies to its record version, for its lifetime', async () => {
      const sessionKey = newSessionKey();
      assert.equal(await locks().heldMs(sessionKey, 1), 0);
      await locks().hold(sessionKey, 1, LONG_TTL_MS);
      const left = await locks().heldMs(sessionKey, 1);
      assert.ok(left > LONG_TTL_MS - 5000, `a fresh hold has ${left} ms left`);
      assert.ok(left <= LONG_TTL_MS, `a fresh hold has ${left} ms left`);
      assert.equal(await locks().heldMs(sessionKey, 2), 0);
      await locks().hold(sessionKey, 2, EXPIRING_TTL_MS);
      const after = await untilEnded(
        () => locks().heldMs(sessionKey, 2),
        (ms) => ms === 0,
      );
      assert.equal(after, 0, 'the hold outlived its lifetime');
    });
  });

  describe('counters', () => {
    test('a key is claimed once; other keys are independent; a claim expires', async () => {
      const key = `claim-${randomUUID()}`;
      const shortKey = `claim-${randomUUID()}`;
      assert.equal(await counters().claimOnce(key, LONG_TTL_MS), true);
      assert.equal(await counters().claimOnce(key, LONG_TTL_MS), false);
      assert.equal(await counters().claimOnce(shortKey, EXPIRING_TTL_MS), true);
      const claimedAgain = await untilEnded(
        () => counters().claimOnce(shortKey, LONG_TTL_MS),
        (claimed) => claimed,
      );
      assert.equal(claimedAgain, true, 'the claim outlived its TTL');
      assert.equal(await counters().claimOnce(shortKey, LONG_TTL_MS), false);
      assert.equal(await counters().claimOnce(key, LONG_TTL_MS), false);
    });

    const count = (key: string, increment: -1 | 0 | 1, windowMs = LONG_TTL_MS) =>
      counters().countInWindow(key, increment, windowMs);

    test('a window count reads 0 without opening a window, counts up, and ends with its window', async () => {
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
      await count(short, 1, EXPIRING_TTL_MS);
      await count(short, 1, EXPIRING_TTL_MS);
      const ended = await untilEnded(
        () => count(short, 0, EXPIRING_TTL_MS),
        (window) => window.count === 0,
      );
      assert.deepEqual(ended, { count: 0, resetInMs: 0 }, 'the window outlived its length');
      assert.equal((await count(short, 1, EXPIRING_TTL_MS)).count, 1);
    });

    test('a later count does not stretch the window; 30 concurrent counts are all kept', async () => {
      const key = `count-${randomUUID()}`;
      const first = await count(key, 1, 5_000);
      // Until the store's own clock has moved on (the window's time left goes down).
      const read = await untilEnded(
        () => count(key, 0, 5_000),
        (window) => window.resetInMs < first.resetInMs,
      );
      assert.ok(read.resetInMs < first.resetInMs, "the window's time left never went down");
      const later = await count(key, 1, 60_000);
      assert.ok(later.resetInMs <= first.resetInMs);
      const results = await Promise.all(Array.from({ length: 30 }, () => count(key, 1)));
      assert.deepEqual(
        results.map((r) => r.count).sort((a, b) => a - b),
        Array.from({ length: 30 }, (_, i) => i + 3),
      );
    });

    test('a give-back (-1) takes one count back, never below 0, and opens no window', async () => {
      const key = `count-${randomUUID()}`;
      assert.deepEqual(await count(key, -1), { count: 0, resetInMs: 0 });
      assert.deepEqual(await count(key, 0), { count: 0, resetInMs: 0 });
      await count(key, 1);
      await count(key, 1);
      const back = await count(key, -1);
      assert.equal(back.count, 1);
      assert.ok(back.resetInMs > 0 && back.resetInMs <= LONG_TTL_MS);
      assert.deepEqual(await count(key, -1), { count: 0, resetInMs: 0 });
      assert.deepEqual(await count(key, -1), { count: 0, resetInMs: 0 });
      const reopened = await count(key, 1, 5_000);
      assert.equal(reopened.count, 1);
      assert.ok(reopened.resetInMs > 0 && reopened.resetInMs <= 5_000);
    });

    test('refuses a bad key, increment or window with a TypeError', async () => {
      await assert.rejects(count('', 1), TypeError);
      await assert.rejects(counters().countInWindow('k', 2 as 1, 1000), TypeError);
      await assert.rejects(count('k', 1, 0), TypeError);
    });
  });

  // Every store answers these (the parts' calls one by one when it has no `entries`); a store with
  // `entries` is checked both ways, so its one-step `begin` gives what its parts give.
  const beginWays: Array<[string, () => StoreEngine]> = [
    [
      "made of the parts' calls",
      () => {
        const store = getStore();
        return { records: store.records, locks: store.locks, counters: store.counters };
      },
    ],
    ["the store's own `entries.begin` (when it has one)", getStore],
  ];
  for (const [way, storeOf] of beginWays) {
    describe(`entries: the checks before a code exchange, ${way}`, () => {
      const HOLD = 'contract-hold';
      const begin = (overrides: Partial<EntryBegin> = {}) =>
        beginEntry(storeOf(), {
          failureKey: `failures-${randomUUID()}`,
          failedKey: `failed-${randomUUID()}`,
          failureLimit: 3,
          failureWindowMs: LONG_TTL_MS,
          holdKey: `${HOLD}-${randomUUID()}`,
          holdVersion: 1,
          probeKey: `probe-${randomUUID()}`,
          probeTtlMs: LONG_TTL_MS,
          budgetKey: `budget-${randomUUID()}`,
          budgetPerSecond: 1000,
          claimKey: `claim-${randomUUID()}`,
          claimTtlMs: LONG_TTL_MS,
          ...overrides,
        });
      const countOf = async (key: string) =>
        (await counters().countInWindow(key, 0, LONG_TTL_MS)).count;

      test('a fresh code is claimed once, its address counted, with the login generation as it is now', async () => {
        const claimKey = `claim-${randomUUID()}`;
        const failureKey = `failures-${randomUUID()}`;
        const first = await begin({ claimKey, failureKey });
        assert.deepEqual(first, {
          stopped: undefined,
          reserved: true,
          probing: false,
          budgeted: false,
          claimed: true,
          loginGeneration: await records().loginGeneration(),
        });
        assert.equal(await countOf(failureKey), 1);
        const again = await begin({ claimKey });
        assert.equal(again.claimed, false);
        assert.equal(again.reserved, true);
        assert.equal(again.loginGeneration, undefined);
        assert.equal(await counters().claimOnce(claimKey, LONG_TTL_MS), false);
        await records().deletePlayer(player());
        const moved = await begin();
        assert.equal(moved.loginGeneration, await records().loginGeneration());
        assert.notEqual(moved.loginGeneration, first.loginGeneration);
        const noLimit = await begin({ failureKey: undefined });
        assert.equal(noLimit.reserved, false);
        assert.equal(noLimit.claimed, true);
      });

      test('an address at its limit is stopped before the hold and the claim, its count unchanged', async () => {
        const failureKey = `failures-${randomUUID()}`;
        const holdKey = `${HOLD}-${randomUUID()}`;
        await locks().hold(holdKey, 1, LONG_TTL_MS);
        for (let i = 0; i < 3; i += 1) await counters().countInWindow(failureKey, 1, LONG_TTL_MS);
        const claimKey = `claim-${randomUUID()}`;
        const stopped = await begin({ failureKey, holdKey, claimKey });
        assert.equal(stopped.stopped?.reason, 'failures');
        assert.ok(stopped.stopped.retryInMs > 0 && stopped.stopped.retryInMs <= LONG_TTL_MS);
        assert.equal(stopped.reserved, false);
        assert.equal(stopped.claimed, undefined);
        // Not claimed: the player's code stays good for another try.
        assert.equal(await counters().claimOnce(claimKey, LONG_TTL_MS), true);
        assert.equal(await countOf(failureKey), 3);
      });

      test('a concurrent burst from one address: exactly the limit goes on', async () => {
        const failureKey = `failures-${randomUUID()}`;
        const results = await Promise.all(Array.from({ length: 12 }, () => begin({ failureKey })));
        assert.equal(results.filter((r) => r.claimed === true).length, 3);
        assert.equal(results.filter((r) => r.stopped?.reason === 'failures').length, 9);
        assert.equal(await countOf(failureKey), 3);
      });

      test('while held, an address with failed entries is stopped; one with none probes, one per probe time', async () => {
        const holdKey = `${HOLD}-${randomUUID()}`;
        const probeKey = `probe-${randomUUID()}`;
        await locks().hold(holdKey, 1, 5_000);
        const failedKey = `failed-${randomUUID()}`;
        await counters().countInWindow(failedKey, 1, LONG_TTL_MS);
        const failed = { failureKey: `failures-${randomUUID()}`, failedKey };
        const claimKey = `claim-${randomUUID()}`;
        const held = await begin({ holdKey, probeKey, ...failed, claimKey });
        assert.equal(held.stopped?.reason, 'held');
        assert.ok(held.stopped.retryInMs > 0 && held.stopped.retryInMs <= 5_000);
        assert.equal(held.claimed, undefined);
        assert.equal(await countOf(failed.failureKey), 0);
        assert.equal(await counters().claimOnce(claimKey, LONG_TTL_MS), true);
        const probe = await begin({ holdKey, probeKey });
        assert.equal(probe.stopped, undefined);
        assert.equal(probe.probing, true);
        assert.equal(probe.claimed, true);
        const second = `failures-${randomUUID()}`;
        const late = await begin({ holdKey, probeKey, failureKey: second });
        assert.equal(late.stopped?.reason, 'probed');
        assert.equal(await countOf(second), 0);
        const other = await begin({ holdKey, holdVersion: 2, ...failed });
        assert.equal(other.stopped, undefined);
        assert.equal(other.probing, false);
        assert.equal(other.claimed, true);
      });

      test('addresses with failed entries share the budget of the second; others do not spend it', async () => {
        // The budget's window runs from its first count.
        const run = await withinLifetime(ENTRY_BUDGET_WINDOW_MS, async () => {
          const budgetKey = `budget-${randomUUID()}`;
          const failedKey = `failed-${randomUUID()}`;
          await counters().countInWindow(failedKey, 1, LONG_TTL_MS);
          const failureKey = `failures-${randomUUID()}`;
          const within = { budgetKey, budgetPerSecond: 2, failureKey, failedKey, failureLimit: 10 };
          const firstTwo = [await begin(within), await begin(within)];
          const spent = await begin(within);
          const failures = await countOf(failureKey);
          const budgetCount = (await counters().countInWindow(budgetKey, 0, ENTRY_BUDGET_WINDOW_MS))
            .count;
          // A unit given back (the entry did not fail on its code) lets the next one go.
          await counters().countInWindow(budgetKey, -1, ENTRY_BUDGET_WINDOW_MS);
          const next = await begin(within);
          return { budgetKey, within, firstTwo, spent, failures, budgetCount, next };
        });
        const { budgetKey, within, spent } = run;
        assert.deepEqual(
          run.firstTwo.map((r) => [r.claimed, r.budgeted]),
          [
            [true, true],
            [true, true],
          ],
        );
        assert.equal(spent.stopped?.reason, 'budget');
        assert.ok(spent.stopped.retryInMs > 0 && spent.stopped.retryInMs <= 1000);
        assert.equal(run.failures, 2);
        assert.equal(run.budgetCount, 2);
        assert.equal(run.next.claimed, true);
        // Entries in flight from one address with no failure (players behind one NAT) never wait.
        const busy = `failures-${randomUUID()}`;
        const together = await Promise.all(
          Array.from({ length: 3 }, () =>
            begin({ budgetKey, budgetPerSecond: 2, failureKey: busy }),
          ),
        );
        assert.deepEqual(
          together.map((r) => [r.claimed, r.budgeted]),
          [
            [true, false],
            [true, false],
            [true, false],
          ],
        );
        const off = await begin({ ...within, budgetKey: undefined });
        assert.equal(off.claimed, true);
      });

      test('20 concurrent entries with one code: exactly one claims it', async () => {
        const claimKey = `claim-${randomUUID()}`;
        const results = await Promise.all(Array.from({ length: 20 }, () => begin({ claimKey })));
        assert.equal(results.filter((r) => r.claimed === true).length, 1);
        assert.equal(results.filter((r) => r.claimed === false).length, 19);
      });

      test('refuses a bad claim key, hold, probe, budget, limit or window with a TypeError', async () => {
        await assert.rejects(begin({ claimKey: '' }), TypeError);
        await assert.rejects(begin({ holdVersion: -1 }), TypeError);
        await assert.rejects(begin({ failureWindowMs: 0 }), TypeError);
        await assert.rejects(begin({ failureLimit: 0 }), TypeError);
        await assert.rejects(begin({ probeTtlMs: 0 }), TypeError);
        await assert.rejects(begin({ budgetPerSecond: 0 }), TypeError);
        const failureKey = `failures-${randomUUID()}`;
        await counters().countInWindow(failureKey, 1, LONG_TTL_MS);
        // The address is at its limit (1): the claim is never reached, its lifetime still checked.
        await assert.rejects(begin({ failureKey, failureLimit: 1, claimTtlMs: 0 }), TypeError);
      });
    });
  }

  describe('concurrency', () => {
    test('50 concurrent compare-and-set writers on one version: exactly one wins', async () => {
      const sessionKey = newSessionKey();
      await putNew(sessionKey, sampleRecord(1));
      const candidates = Array.from({ length: 50 }, () => sampleRecord(2));
      const results = await Promise.all(
        candidates.map((record) =>
          records().put(sessionKey, record, { expectedVersion: 1, ttlMs: LONG_TTL_MS }),
        ),
      );
      assert.equal(results.filter(Boolean).length, 1);
      assert.deepEqual(found(await read(sessionKey)), candidates[results.indexOf(true)]);
    });

    test('50 concurrent first writes on one session: exactly one wins', async () => {
      const sessionKey = newSessionKey();
      const results = await Promise.all(
        Array.from({ length: 50 }, () => putNew(sessionKey, sampleRecord(1))),
      );
      assert.equal(results.filter(Boolean).length, 1);
    });

    test('20 concurrent lock takers: exactly one owner', async () => {
      const sessionKey = newSessionKey();
      const owners = await Promise.all(
        Array.from({ length: 20 }, () => locks().acquire(sessionKey, LONG_TTL_MS)),
      );
      assert.equal(owners.filter((owner) => owner !== undefined).length, 1);
    });

    test('20 concurrent claims of one key: exactly one succeeds', async () => {
      const key = `claim-${randomUUID()}`;
      const results = await Promise.all(
        Array.from({ length: 20 }, () => counters().claimOnce(key, LONG_TTL_MS)),
      );
      assert.equal(results.filter(Boolean).length, 1);
    });
  });

  describe('records.cachedRead (optional: tested when the store has it)', () => {
    test('answers as get would, from memory, or not at all: never an old version after a write or a delete', async () => {
      const cachedRead = records().cachedRead?.bind(records());
      if (cachedRead === undefined) return; // the optional method is absent: nothing to hold it to
      /** Memory's answer for `sessionKey` equals `expected`, or memory does not answer. */
      const heldAs = async (sessionKey: string, expected: RecordRead) => {
        const held = cachedRead(sessionKey);
        assert.ok(!(held instanceof Promise), 'cachedRead answers at once, not with a promise');
        if (held !== undefined) assert.deepEqual(held, expected);
      };
      assert.equal(cachedRead(''), undefined, 'a key get refuses is never held');
      const sessionKey = newSessionKey();
      await heldAs(sessionKey, { status: 'absent' });
      await putNew(sessionKey, sampleRecord(1));
      await heldAs(sessionKey, await read(sessionKey)); // memory may hold it from here on
      const cas = { expectedVersion: 1, ttlMs: LONG_TTL_MS };
      const second = sampleRecord(2);
      assert.equal(await records().put(sessionKey, second, cas), true);
      await heldAs(sessionKey, { status: 'found', record: second });
      await records().delete(sessionKey);
      await heldAs(sessionKey, { status: 'absent' });
    });
  });

  describe('changes (optional: tested when the store has them)', () => {
    /** Resolves true once `onChange` was called, false after `ms`. */
    const told = (sessionKey: string, ms = 2000) =>
      new Promise<boolean>((resolve) => {
        const changes = getStore().changes!;
        const timer = setTimeout(() => {
          unwatch();
          resolve(false);
        }, ms);
        const unwatch = changes.watch(sessionKey, () => {
          clearTimeout(timer);
          unwatch();
          resolve(true);
        });
      });
    const LIVE_WITHIN_MS = 10_000;
    /**
     * Runs `body` once the store's notices are live (a store may take a moment to connect). The
     * engines this runs on all have them: notices never live fail the test rather than pass it.
     */
    const whenLive = async (body: () => Promise<void>) => {
      const changes = getStore().changes;
      if (changes === undefined) return; // the optional part is absent: nothing to hold it to
      const live = await pollUntil(
        async () => changes.live,
        (isLive) => isLive,
        LIVE_WITHIN_MS,
      );
      assert.equal(live, true, `its change notices did not go live within ${LIVE_WITHIN_MS} ms`);
      await body();
    };

    test("a watcher is told of its session's write, delete and lock release", async () => {
      await whenLive(async () => {
        const sessionKey = newSessionKey();
        let wait = told(sessionKey);
        await putNew(sessionKey, sampleRecord(1));
        assert.equal(await wait, true, 'not told of a write');
        wait = told(sessionKey);
        await records().delete(sessionKey);
        assert.equal(await wait, true, 'not told of a delete');
        // Free at once: a cache lease running out on a busy machine is no sign that the server
        // changed, so it holds no lock back (docs/durability.md).
        const owner = await locks().acquire(sessionKey, LONG_TTL_MS);
        assert.equal(typeof owner, 'string', 'the lock was not free');
        wait = told(sessionKey);
        assert.equal(await locks().release(sessionKey, owner!), true, 'the lock was not released');
        assert.equal(await wait, true, 'not told of a lock release');
      });
    });

    test('an unsubscribed watcher is not told; a watch of another session is not told', async () => {
      await whenLive(async () => {
        // `onChange` may also be called spuriously: once for every watcher when notices were reset
        // (a late heartbeat on a busy machine). A second unrelated watcher tells such a reset from a
        // notice sent to the wrong session, and the check runs again after one (3 tries at most):
        // a store that told every watcher of every change fails all three. No fixed wait for a
        // notice that should not come: a write to a third session, watched, comes after the first
        // write, and its notice after the first write's (notices arrive in order).
        const changes = getStore().changes!;
        /** Counts the calls of a watch of `sessionKey` until `stop()`. */
        const counted = (sessionKey: string) => {
          const watch = { calls: 0, stop: () => undefined as void };
          watch.stop = changes.watch(sessionKey, () => {
            watch.calls += 1;
          });
          return watch;
        };
        for (let attempt = 1; ; attempt += 1) {
          const sessionKey = newSessionKey();
          const unsubscribed = counted(sessionKey);
          unsubscribed.stop();
          const other = counted(newSessionKey());
          const witness = counted(newSessionKey());
          const control = told(sessionKey);
          await putNew(sessionKey, sampleRecord(1));
          assert.equal(await control, true, 'not told of a write');
          const barrier = newSessionKey();
          const afterwards = told(barrier);
          await putNew(barrier, sampleRecord(1));
          assert.equal(await afterwards, true, 'not told of a write');
          other.stop();
          witness.stop();
          assert.equal(unsubscribed.calls, 0, 'an unsubscribed watcher was told');
          if (other.calls > 0 && witness.calls > 0 && attempt < 3) continue;
          assert.equal(other.calls, 0, 'a watch of another session was told');
          return;
        }
      });
    });
  });
}
