// MemoryTokenStore: the shared store contract, then its own size bound, lazy expiry and options.
import { MemoryTokenStore } from '../../lib/stores/memory-store';
import { newSessionId, sampleRecord, tokenStoreContract } from '../helpers/store-contract';

describe('MemoryTokenStore contract', () => {
  const store = new MemoryTokenStore();
  tokenStoreContract(() => store);
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
    expect(await store.claimOnce('c', 60_000)).toBe(true);
    expect(await store.claimOnce('c', 60_000)).toBe(false);
    // 'a' was the oldest and has been dropped.
    expect(await store.claimOnce('a', 60_000)).toBe(true);
    const sessionIds = [newSessionId(), newSessionId(), newSessionId()];
    const [first] = await Promise.all(sessionIds.map((id) => store.acquireLock(id, 60_000)));
    expect(await store.releaseLock(sessionIds[0]!, first!)).toBe(false);
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
