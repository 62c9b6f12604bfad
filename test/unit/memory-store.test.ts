// MemoryTokenStore: the shared store contract, then its own size bound, lazy expiry and options.
import type { TokenStore } from 'express-platform-login';
import { MemoryTokenStore } from '../../lib/stores/memory-store';
import { SetupError } from '../../lib/errors';
import { newSessionKey, sampleRecord, tokenStoreContract } from 'express-platform-login/testing';

describe('MemoryTokenStore contract', () => {
  const store = new MemoryTokenStore();
  tokenStoreContract(() => store);
});

describe("a studio's own store: the three required parts, no changes", () => {
  // What a studio writes: its own object of parts, checked with the runner's functions passed in.
  const inner = new MemoryTokenStore();
  const store: TokenStore = {
    records: inner.records,
    locks: inner.locks,
    counters: inner.counters,
  };
  tokenStoreContract(() => store, { testFunctions: { describe, test: it } });
});

describe('the contract catches a store that never expires anything', () => {
  // Every lifetime under a second (the contract's expiry tests use 40 to 150 ms) is kept for 30 s
  // instead: the expiry tests must fail on it, each once its poll gives up, and no other test.
  const inner = new MemoryTokenStore();
  const kept = (ttlMs: number): number => (ttlMs > 0 && ttlMs < 1000 ? 30_000 : ttlMs);
  const store: TokenStore = {
    records: {
      get: (key) => inner.records.get(key),
      put: (key, record, options) =>
        inner.records.put(key, record, { ...options, ttlMs: kept(options.ttlMs) }),
      delete: (key, options) => inner.records.delete(key, options),
      renew: (key, openId, ttlMs) => inner.records.renew(key, openId, kept(ttlMs)),
      loginsOf: (openId) => inner.records.loginsOf(openId),
      deletePlayer: (openId) => inner.records.deletePlayer(openId),
      loginGeneration: () => inner.records.loginGeneration(),
    },
    locks: {
      acquire: (key, ttlMs) => inner.locks.acquire(key, kept(ttlMs)),
      extend: (key, owner, ttlMs) => inner.locks.extend(key, owner, kept(ttlMs)),
      release: (key, owner) => inner.locks.release(key, owner),
      hold: (key, version, ttlMs) => inner.locks.hold(key, version, kept(ttlMs)),
      heldMs: (key, version) => inner.locks.heldMs(key, version),
    },
    counters: {
      claimOnce: (key, ttlMs) => inner.counters.claimOnce(key, kept(ttlMs)),
      countInWindow: (key, increment, windowMs) =>
        inner.counters.countInWindow(key, increment, kept(windowMs)),
    },
  };

  test('its expiry tests fail (each after its poll of 200 ms), every other test passes', async () => {
    const tests: Array<{ name: string; body: () => Promise<void> }> = [];
    tokenStoreContract(() => store, {
      testFunctions: {
        describe: (_name, body) => body(),
        test: (name, body) => tests.push({ name, body }),
      },
      expiryTimeoutMs: 200,
    });
    expect(tests.length).toBeGreaterThan(30);
    const outcomes = await Promise.allSettled(tests.map(({ body }) => body()));
    const failed = tests
      .filter((_, i) => outcomes[i]!.status === 'rejected')
      .map(({ name }) => name);
    expect(failed.sort()).toEqual(
      [
        'a record is gone after its TTL while a longer-lived one stays',
        'renew gives an existing record (and its index entry) a new lifetime, a missing one none',
        "lists a player's live logins freshest first, pruning deleted and expired ones",
        'the lock of an owner that died expires, and its late release frees nothing',
        'only the owner extends a lock, and an extended lock outlives its first lifetime',
        'a refresh hold applies to its record version, for its lifetime',
        'a key is claimed once; other keys are independent; a claim expires',
        'a window count reads 0 without opening a window, counts up, and ends with its window',
      ].sort(),
    );
  });
});

const put = (store: MemoryTokenStore, key: string, version = 1, ttlMs = 60_000) =>
  store.records.put(key, sampleRecord(version), {
    expectedVersion: version === 1 ? null : version - 1,
    ttlMs,
  });
const status = async (store: MemoryTokenStore, key: string) =>
  (await store.records.get(key)).status;

describe('MemoryTokenStore bounds and expiry', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  test('when full, the oldest written record is dropped', async () => {
    const store = new MemoryTokenStore({ maxEntries: 3 });
    const keys = [newSessionKey(), newSessionKey(), newSessionKey(), newSessionKey()];
    for (const key of keys.slice(0, 3)) await put(store, key);
    // Rewriting the first makes it the newest, so the second is now the oldest.
    await put(store, keys[0]!, 2);
    await put(store, keys[3]!);
    expect(await status(store, keys[1]!)).toBe('absent');
    for (const key of [keys[0]!, keys[2]!, keys[3]!])
      expect(await status(store, key)).toBe('found');
  });

  test('locks and claims are bounded too', async () => {
    const store = new MemoryTokenStore({ maxEntries: 2 });
    expect(await store.counters.claimOnce('a', 60_000)).toBe(true);
    expect(await store.counters.claimOnce('b', 60_000)).toBe(true);
    // Full: an unexpired claim is never dropped (a code could be sent twice); new ones are refused.
    await expect(store.counters.claimOnce('c', 60_000)).rejects.toMatchObject({
      status: 503,
      error: 'store_unavailable',
    });
    expect(await store.counters.claimOnce('a', 60_000)).toBe(false);
    expect(await store.counters.claimOnce('b', 60_000)).toBe(false);
    const keys = [newSessionKey(), newSessionKey(), newSessionKey()];
    const [first] = await Promise.all(keys.map((key) => store.locks.acquire(key, 60_000)));
    expect(await store.locks.release(keys[0]!, first!)).toBe(false);
  });

  test('a full claim table takes new claims again once old ones expire', async () => {
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    const store = new MemoryTokenStore({ maxEntries: 3 });
    for (const key of ['a', 'b', 'c'])
      expect(await store.counters.claimOnce(key, 1_000)).toBe(true);
    await expect(store.counters.claimOnce('d', 1_000)).rejects.toThrow(/maxEntries/);
    jest.setSystemTime(1_700_000_001_000);
    expect(await store.counters.claimOnce('d', 1_000)).toBe(true);
  });

  test('expiry follows the clock, to the millisecond', async () => {
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    const store = new MemoryTokenStore();
    const key = newSessionKey();
    await put(store, key, 1, 10_000);
    const owner = await store.locks.acquire(key, 5_000);
    await store.counters.claimOnce('code', 20_000);
    jest.setSystemTime(1_700_000_004_999);
    expect(await store.locks.acquire(key, 5_000)).toBeUndefined();
    jest.setSystemTime(1_700_000_005_000);
    expect(await store.locks.release(key, owner!)).toBe(false);
    jest.setSystemTime(1_700_000_009_999);
    expect(await status(store, key)).toBe('found');
    jest.setSystemTime(1_700_000_010_000);
    expect(await status(store, key)).toBe('absent');
    expect(await store.counters.claimOnce('code', 20_000)).toBe(false);
    jest.setSystemTime(1_700_000_020_000);
    expect(await store.counters.claimOnce('code', 20_000)).toBe(true);
  });

  test('no timer is left running: using the store creates no pending handle', async () => {
    const before = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const store = new MemoryTokenStore();
    const key = newSessionKey();
    await put(store, key);
    await store.locks.acquire(key, 60_000);
    await store.counters.claimOnce('k', 60_000);
    const after = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    expect(after).toBe(before);
  });

  test('close() drops everything', async () => {
    const store = new MemoryTokenStore();
    const key = newSessionKey();
    await put(store, key);
    await store.close();
    expect(await status(store, key)).toBe('absent');
  });

  test('options are checked at construction', () => {
    expect(() => new MemoryTokenStore({ maxEntries: 0 })).toThrow(/maxEntries/);
    expect(() => new MemoryTokenStore({ maxEntries: 1.5 })).toThrow(SetupError);
    expect(() => new MemoryTokenStore({ maxEntry: 5 } as never)).toThrow(
      /unknown option `maxEntry`/,
    );
  });
});

describe('MemoryTokenStore per-player index stays bounded', () => {
  test('logouts and evictions take sessions out of the index', async () => {
    const store = new MemoryTokenStore({ maxEntries: 10 });
    const putFor = (key: string, openId: string) =>
      store.records.put(key, sampleRecord(1, { openId }), { expectedVersion: null, ttlMs: 60_000 });
    for (let i = 0; i < 50; i += 1) await putFor(`s-${i}`, `player-${i}`);
    // Only the 10 newest records are kept; the 40 evicted players have no index entry left.
    expect(store.indexedPlayerCount).toBe(10);
    expect(await store.records.loginsOf('player-0')).toEqual([]);
    expect((await store.records.loginsOf('player-49')).length).toBe(1);
    await store.records.delete('s-49');
    expect(store.indexedPlayerCount).toBe(9);
    expect(await store.records.loginsOf('player-49')).toEqual([]);
  });
});

describe('MemoryTokenStore changes', () => {
  test('watchers are told synchronously of a write, a lock release and a delete of their session only', async () => {
    const store = new MemoryTokenStore();
    expect(store.changes.live).toBe(true);
    const calls: string[] = [];
    const unwatch = store.changes.watch('s1', () => calls.push('s1'));
    store.changes.watch('s2', () => calls.push('s2'));
    await put(store, 's1');
    const owner = (await store.locks.acquire('s1', 60_000))!;
    await store.locks.release('s1', owner);
    await store.records.delete('s1');
    expect(calls).toEqual(['s1', 's1', 's1']);
    unwatch();
    await put(store, 's1');
    expect(calls).toEqual(['s1', 's1', 's1']);
  });

  test('a watcher that throws does not keep the others from being told', async () => {
    const store = new MemoryTokenStore();
    let told = false;
    store.changes.watch('s1', () => {
      throw new Error('boom');
    });
    store.changes.watch('s1', () => (told = true));
    await put(store, 's1');
    expect(told).toBe(true);
  });
});
