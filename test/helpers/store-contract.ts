// The TokenStore contract as one Jest suite, run against every store: MemoryTokenStore, and
// RedisTokenStore on a standalone Redis and on a Redis Cluster, in the clear and encrypted.
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TokenRecord } from '../../lib/core/token-record';
import type { TokenStore } from '../../lib/core/token-store';

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

/**
 * Declares the contract tests inside the caller's `describe`. `getStore` is called in each test,
 * after the caller's `beforeAll` has built the store.
 */
export function tokenStoreContract(getStore: () => TokenStore): void {
  const putNew = async (sessionId: string, record: TokenRecord, ttlMs = LONG_TTL_MS) =>
    getStore().put(sessionId, record, { expectedVersion: null, ttlMs });

  describe('get and put', () => {
    test('a session without a record reads as undefined', async () => {
      expect(await getStore().get(newSessionId())).toBeUndefined();
    });

    test('a first write (expected version null) is stored and read back field for field', async () => {
      const sessionId = newSessionId();
      const record = sampleRecord(1);
      expect(await putNew(sessionId, record)).toBe(true);
      expect(await getStore().get(sessionId)).toEqual(record);
    });

    test('a record without unionId reads back without one, and unicode survives', async () => {
      const sessionId = newSessionId();
      const { unionId: _unionId, ...record } = sampleRecord(1, {
        accessToken: 'tøken-✓-|-"quoted"-\\',
        scope: [],
      });
      expect(await putNew(sessionId, record)).toBe(true);
      const read = await getStore().get(sessionId);
      expect(read).toEqual(record);
      expect(read).not.toHaveProperty('unionId');
    });

    test('a first write over an existing record is refused and leaves it unchanged', async () => {
      const sessionId = newSessionId();
      const first = sampleRecord(1);
      await putNew(sessionId, first);
      expect(await putNew(sessionId, sampleRecord(1))).toBe(false);
      expect(await getStore().get(sessionId)).toEqual(first);
    });

    test('compare-and-set: the expected version writes, a stale one is refused', async () => {
      const sessionId = newSessionId();
      await putNew(sessionId, sampleRecord(1));
      const second = sampleRecord(2);
      expect(
        await getStore().put(sessionId, second, { expectedVersion: 1, ttlMs: LONG_TTL_MS }),
      ).toBe(true);
      expect(await getStore().get(sessionId)).toEqual(second);
      const stale = sampleRecord(2);
      expect(
        await getStore().put(sessionId, stale, { expectedVersion: 1, ttlMs: LONG_TTL_MS }),
      ).toBe(false);
      expect(await getStore().get(sessionId)).toEqual(second);
    });

    test('a version 1 does not match a stored version 11 (versions compare whole)', async () => {
      const sessionId = newSessionId();
      const eleven = sampleRecord(11);
      await putNew(sessionId, eleven);
      expect(
        await getStore().put(sessionId, sampleRecord(2), {
          expectedVersion: 1,
          ttlMs: LONG_TTL_MS,
        }),
      ).toBe(false);
      expect(await getStore().get(sessionId)).toEqual(eleven);
    });

    test('an expected version on a session without a record writes nothing', async () => {
      const sessionId = newSessionId();
      expect(
        await getStore().put(sessionId, sampleRecord(2), {
          expectedVersion: 1,
          ttlMs: LONG_TTL_MS,
        }),
      ).toBe(false);
      expect(await getStore().get(sessionId)).toBeUndefined();
    });

    test("sessions do not see each other's records", async () => {
      const [a, b] = [newSessionId(), newSessionId()];
      const recordA = sampleRecord(1);
      await putNew(a, recordA);
      expect(await getStore().get(b)).toBeUndefined();
      expect(await getStore().get(a)).toEqual(recordA);
    });

    test('changing a record after put, or a record read, does not change what is stored', async () => {
      const sessionId = newSessionId();
      const record = sampleRecord(1);
      const original = structuredClone(record);
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
        expect(error).toBeInstanceOf(TypeError);
        expect(Object.isFrozen(read) && Object.isFrozen(read.scope)).toBe(true);
      }
      expect(await getStore().get(sessionId)).toEqual(original);
    });

    test('wrong arguments are TypeErrors, not outages', async () => {
      const sessionId = newSessionId();
      await expect(
        getStore().put(sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: 0 }),
      ).rejects.toThrow(TypeError);
      await expect(
        getStore().put(sessionId, sampleRecord(0), { expectedVersion: null, ttlMs: 1000 }),
      ).rejects.toThrow(TypeError);
      await expect(getStore().get('')).rejects.toThrow(TypeError);
      expect(await getStore().get(sessionId)).toBeUndefined();
    });
  });

  describe('delete', () => {
    test('without a version it deletes whatever is stored', async () => {
      const sessionId = newSessionId();
      await putNew(sessionId, sampleRecord(3));
      expect(await getStore().delete(sessionId)).toBe(true);
      expect(await getStore().get(sessionId)).toBeUndefined();
      expect(await getStore().delete(sessionId)).toBe(false);
    });

    test('with a version it deletes only that version', async () => {
      const sessionId = newSessionId();
      const record = sampleRecord(2);
      await putNew(sessionId, record);
      expect(await getStore().delete(sessionId, { expectedVersion: 1 })).toBe(false);
      expect(await getStore().get(sessionId)).toEqual(record);
      expect(await getStore().delete(sessionId, { expectedVersion: 2 })).toBe(true);
      expect(await getStore().get(sessionId)).toBeUndefined();
    });
  });

  describe('expiry', () => {
    test('a record is gone after its TTL while a longer-lived one stays', async () => {
      const [short, long] = [newSessionId(), newSessionId()];
      const kept = sampleRecord(1);
      await putNew(short, sampleRecord(1), SHORT_TTL_MS);
      await putNew(long, kept, LONG_TTL_MS);
      await sleep(PAST_SHORT_TTL_MS);
      expect(await getStore().get(short)).toBeUndefined();
      expect(await getStore().get(long)).toEqual(kept);
      // An expired record counts as absent for compare-and-set too.
      expect(await putNew(short, sampleRecord(1))).toBe(true);
    });
  });

  describe('locks', () => {
    test('a lock is exclusive and released only by its owner', async () => {
      const sessionId = newSessionId();
      const owner = await getStore().acquireLock(sessionId, LONG_TTL_MS);
      expect(typeof owner).toBe('string');
      expect(owner!.length).toBeGreaterThanOrEqual(16);
      expect(await getStore().acquireLock(sessionId, LONG_TTL_MS)).toBeUndefined();
      expect(await getStore().releaseLock(sessionId, 'someone-else')).toBe(false);
      expect(await getStore().acquireLock(sessionId, LONG_TTL_MS)).toBeUndefined();
      expect(await getStore().releaseLock(sessionId, owner!)).toBe(true);
      expect(await getStore().releaseLock(sessionId, owner!)).toBe(false);
      const next = await getStore().acquireLock(sessionId, LONG_TTL_MS);
      expect(next).toEqual(expect.any(String));
      expect(next).not.toBe(owner);
    });

    test('locks of different sessions are independent, and a lock does not block writes', async () => {
      const [a, b] = [newSessionId(), newSessionId()];
      expect(await getStore().acquireLock(a, LONG_TTL_MS)).toEqual(expect.any(String));
      expect(await getStore().acquireLock(b, LONG_TTL_MS)).toEqual(expect.any(String));
      expect(await putNew(a, sampleRecord(1))).toBe(true);
    });

    test('the lock of an owner that died expires, and its late release frees nothing', async () => {
      const sessionId = newSessionId();
      const dead = await getStore().acquireLock(sessionId, SHORT_TTL_MS);
      expect(dead).toEqual(expect.any(String));
      await sleep(PAST_SHORT_TTL_MS);
      const next = await getStore().acquireLock(sessionId, LONG_TTL_MS);
      expect(next).toEqual(expect.any(String));
      expect(await getStore().releaseLock(sessionId, dead!)).toBe(false);
      expect(await getStore().acquireLock(sessionId, LONG_TTL_MS)).toBeUndefined();
    });
  });

  describe('claimOnce', () => {
    test('a key is claimed once; other keys are independent; a claim expires', async () => {
      const key = `claim-${randomUUID()}`;
      const shortKey = `claim-${randomUUID()}`;
      expect(await getStore().claimOnce(key, LONG_TTL_MS)).toBe(true);
      expect(await getStore().claimOnce(key, LONG_TTL_MS)).toBe(false);
      expect(await getStore().claimOnce(shortKey, SHORT_TTL_MS)).toBe(true);
      await sleep(PAST_SHORT_TTL_MS);
      expect(await getStore().claimOnce(shortKey, LONG_TTL_MS)).toBe(true);
      expect(await getStore().claimOnce(key, LONG_TTL_MS)).toBe(false);
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
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await getStore().get(sessionId)).toEqual(candidates[results.indexOf(true)]);
    });

    test('50 concurrent first writes on one session: exactly one wins', async () => {
      const sessionId = newSessionId();
      const results = await Promise.all(
        Array.from({ length: 50 }, () => putNew(sessionId, sampleRecord(1))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    test('20 concurrent lock takers: exactly one owner', async () => {
      const sessionId = newSessionId();
      const owners = await Promise.all(
        Array.from({ length: 20 }, () => getStore().acquireLock(sessionId, LONG_TTL_MS)),
      );
      expect(owners.filter((owner) => owner !== undefined)).toHaveLength(1);
    });

    test('20 concurrent claims of one key: exactly one succeeds', async () => {
      const key = `claim-${randomUUID()}`;
      const results = await Promise.all(
        Array.from({ length: 20 }, () => getStore().claimOnce(key, LONG_TTL_MS)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('per-player index (sessionsOf, deletePlayer)', () => {
    const player = (): string => `player-${randomUUID()}`;

    test("counts a player's live sessions, pruning deleted and expired ones", async () => {
      const store = getStore();
      const ada = player();
      const bo = player();
      const [a1, a2, a3, b1] = [newSessionId(), newSessionId(), newSessionId(), newSessionId()];
      await putNew(a1, sampleRecord(1, { openId: ada }));
      await putNew(a2, sampleRecord(1, { openId: ada }));
      await putNew(a3, sampleRecord(1, { openId: ada }), SHORT_TTL_MS);
      await putNew(b1, sampleRecord(1, { openId: bo }));
      expect(await store.sessionsOf!(ada)).toBe(3);
      expect(await store.sessionsOf!(bo)).toBe(1);
      await store.delete(a1);
      await sleep(PAST_SHORT_TTL_MS);
      expect(await store.sessionsOf!(ada)).toBe(1);
      // A refresh (a compare-and-set rewrite) does not count the session twice.
      const current = await store.get(a2);
      await store.put(a2, { ...current!, version: 2 }, { expectedVersion: 1, ttlMs: LONG_TTL_MS });
      expect(await store.sessionsOf!(ada)).toBe(1);
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
      expect(await store.deletePlayer!(ada)).toBe(3);
      for (const sessionId of adaSessions) expect(await store.get(sessionId)).toBeUndefined();
      expect(await store.get(boSession)).toBeDefined();
      expect(await store.sessionsOf!(ada)).toBe(0);
      expect(await store.deletePlayer!(ada)).toBe(0);
    });
  });
}
