// MemoryTokenStore: the shared store contract, then its own size bound, lazy expiry and options.
import type { TokenStore } from 'express-platform-login';
import { MemoryTokenStore } from '../../lib/stores/memory-store';
import { newSessionId, sampleRecord, tokenStoreContract } from 'express-platform-login/testing';

describe('MemoryTokenStore contract', () => {
  const store = new MemoryTokenStore();
  tokenStoreContract(() => store);
});

describe("a studio's own store with the required methods only", () => {
  // What a studio writes: its own class, checked with the runner's functions passed in.
  const inner = new MemoryTokenStore();
  const store: TokenStore = {
    get: (sessionId) => inner.get(sessionId),
    put: (sessionId, record, options) => inner.put(sessionId, record, options),
    delete: (sessionId, options) => inner.delete(sessionId, options),
    acquireLock: (sessionId, ttlMs) => inner.acquireLock(sessionId, ttlMs),
    releaseLock: (sessionId, owner) => inner.releaseLock(sessionId, owner),
    claimOnce: (key, ttlMs) => inner.claimOnce(key, ttlMs),
  };
  tokenStoreContract(() => store, {
    testFunctions: { describe, test: it },
    playerIndex: false,
    windowCounts: false,
    recommended: false,
  });
});

describe('MemoryTokenStore bounds and expiry', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  test('when full, the oldest written record is dropped', async () => {
    const store = new MemoryTokenStore({ maxEntries: 3 });
    const ids = [newSessionId(), newSessionId(), newSessionId(), newSessionId()];
    for (const id of ids.slice(0, 3)) {
      await store.put(id, sampleRecord(1), { expectedVersion: null, ttlMs: 60_000 });
    }
    // Rewriting the first makes it the newest, so the second is now the oldest.
    await store.put(ids[0]!, sampleRecord(2), { expectedVersion: 1, ttlMs: 60_000 });
    await store.put(ids[3]!, sampleRecord(1), { expectedVersion: null, ttlMs: 60_000 });
    expect(await store.get(ids[1]!)).toBeUndefined();
    for (const id of [ids[0]!, ids[2]!, ids[3]!]) expect(await store.get(id)).toBeDefined();
  });

  test('locks and claims are bounded too', async () => {
    const store = new MemoryTokenStore({ maxEntries: 2 });
    expect(await store.claimOnce('a', 60_000)).toBe(true);
    expect(await store.claimOnce('b', 60_000)).toBe(true);
    // Full: an unexpired claim is never dropped (a code could be sent twice); new ones are refused.
    await expect(store.claimOnce('c', 60_000)).rejects.toMatchObject({
      status: 503,
      error: 'store_unavailable',
    });
    expect(await store.claimOnce('a', 60_000)).toBe(false);
    expect(await store.claimOnce('b', 60_000)).toBe(false);
    const sessionIds = [newSessionId(), newSessionId(), newSessionId()];
    const [first] = await Promise.all(sessionIds.map((id) => store.acquireLock(id, 60_000)));
    expect(await store.releaseLock(sessionIds[0]!, first!)).toBe(false);
  });

  test('a full claim table takes new claims again once old ones expire', async () => {
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    const store = new MemoryTokenStore({ maxEntries: 3 });
    for (const key of ['a', 'b', 'c']) expect(await store.claimOnce(key, 1_000)).toBe(true);
    await expect(store.claimOnce('d', 1_000)).rejects.toThrow(/maxEntries/);
    jest.setSystemTime(1_700_000_001_000);
    expect(await store.claimOnce('d', 1_000)).toBe(true);
    jest.useRealTimers();
  });

  test('expiry follows the clock, to the millisecond', async () => {
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    const store = new MemoryTokenStore();
    const sessionId = newSessionId();
    await store.put(sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: 10_000 });
    const owner = await store.acquireLock(sessionId, 5_000);
    await store.claimOnce('code', 20_000);
    jest.setSystemTime(1_700_000_004_999);
    expect(await store.acquireLock(sessionId, 5_000)).toBeUndefined();
    jest.setSystemTime(1_700_000_005_000);
    expect(await store.releaseLock(sessionId, owner!)).toBe(false);
    jest.setSystemTime(1_700_000_009_999);
    expect(await store.get(sessionId)).toBeDefined();
    jest.setSystemTime(1_700_000_010_000);
    expect(await store.get(sessionId)).toBeUndefined();
    expect(await store.claimOnce('code', 20_000)).toBe(false);
    jest.setSystemTime(1_700_000_020_000);
    expect(await store.claimOnce('code', 20_000)).toBe(true);
  });

  test('no timer is left running: using the store creates no pending handle', async () => {
    const before = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const store = new MemoryTokenStore();
    const sessionId = newSessionId();
    await store.put(sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: 60_000 });
    await store.acquireLock(sessionId, 60_000);
    await store.claimOnce('k', 60_000);
    const after = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    expect(after).toBe(before);
  });

  test('close() drops everything', async () => {
    const store = new MemoryTokenStore();
    const sessionId = newSessionId();
    await store.put(sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: 60_000 });
    await store.close();
    expect(await store.get(sessionId)).toBeUndefined();
  });

  test('options are checked at construction', () => {
    expect(() => new MemoryTokenStore({ maxEntries: 0 })).toThrow(/maxEntries/);
    expect(() => new MemoryTokenStore({ maxEntries: 1.5 })).toThrow(TypeError);
    expect(() => new MemoryTokenStore({ maxEntry: 5 } as never)).toThrow(
      /unknown option `maxEntry`/,
    );
  });
});

describe('MemoryTokenStore per-player index stays bounded', () => {
  test('logouts and evictions take sessions out of the index', async () => {
    const store = new MemoryTokenStore({ maxEntries: 10 });
    const put = (sessionId: string, openId: string) =>
      store.put(sessionId, sampleRecord(1, { openId }), { expectedVersion: null, ttlMs: 60_000 });
    for (let i = 0; i < 50; i += 1) await put(`s-${i}`, `player-${i}`);
    // Only the 10 newest records are kept; the 40 evicted players have no index entry left.
    expect(store.indexedPlayerCount).toBe(10);
    expect(await store.sessionsOf('player-0')).toBe(0);
    expect(await store.sessionsOf('player-49')).toBe(1);
    await store.delete('s-49');
    expect(store.indexedPlayerCount).toBe(9);
    expect(await store.sessionsOf('player-49')).toBe(0);
  });
});

describe('MemoryTokenStore.waitForChange', () => {
  const record = {
    accessToken: 'a',
    refreshToken: 'r',
    accessExpiresAt: Date.now() + 3_600_000,
    refreshExpiresAt: Date.now() + 86_400_000,
    openId: 'player-ada',
    scope: ['user_info'],
    version: 1,
    obtainedAt: Date.now(),
  };

  /** Whether a wait started before `change` has ended once it ran (the wait's bound is an hour). */
  async function wakes(store: MemoryTokenStore, change: () => Promise<unknown>): Promise<boolean> {
    let woken = false;
    const wait = store.waitForChange('s1', 3_600_000).then(() => (woken = true));
    await change();
    await Promise.resolve();
    await Promise.resolve();
    const result = woken;
    // End the wait either way so no timer is left behind.
    await store.put('s1', { ...record, version: 99 }, { expectedVersion: null, ttlMs: 60_000 });
    await store.delete('s1');
    await wait;
    return result;
  }

  test('wakes on a write, a lock release and a delete of that session, not of another', async () => {
    const store = new MemoryTokenStore();
    expect(
      await wakes(store, () => store.put('s1', record, { expectedVersion: null, ttlMs: 60_000 })),
    ).toBe(true);
    await store.put('s1', record, { expectedVersion: null, ttlMs: 60_000 });
    const owner = (await store.acquireLock('s1', 60_000))!;
    expect(await wakes(store, () => store.releaseLock('s1', owner))).toBe(true);
    await store.put('s1', record, { expectedVersion: null, ttlMs: 60_000 });
    expect(await wakes(store, () => store.delete('s1'))).toBe(true);
    expect(
      await wakes(store, () => store.put('s2', record, { expectedVersion: null, ttlMs: 60_000 })),
    ).toBe(false);
  });

  test('resolves after its timeout without a change', async () => {
    const store = new MemoryTokenStore();
    await expect(store.waitForChange('s1', 5)).resolves.toBeUndefined();
  });
});
