// MemoryTokenStore: the public contract, the engine the package derives from it (as for a studio's
// own store), then its own size bound, lazy expiry and options.
import type { TokenStore } from 'express-platform-login/testing';
import { MemoryTokenStore } from '../../lib/core/memory-store';
import { engineOf } from '../../lib/core/derived-engine';
import { RecordKeyRing } from '../../lib/stores/encryption';
import { randomBytes } from 'node:crypto';
import { SetupError } from '../../lib/errors';
import { newSessionKey, sampleRecord, tokenStoreContract } from 'express-platform-login/testing';
import { storeEngineContract } from '../helpers/engine-contract';
import { MAX_INDEXED_LOGINS } from '../../lib/core/store-keys';
import { studioStore } from '../helpers/records';

describe('MemoryTokenStore: the contract', () => {
  const store = new MemoryTokenStore();
  tokenStoreContract(() => store);
});

describe('MemoryTokenStore: the engine derived from it', () => {
  const store = new MemoryTokenStore();
  storeEngineContract(() => engineOf(store));
});

describe("a studio's own store: the four methods, no watch", () => {
  // Checked with the runner's functions passed in.
  const store = studioStore();
  tokenStoreContract(() => store, { testFunctions: { describe, test: it } });
});

describe("a studio's own store with platformLogin()'s encryptionKeys: the engine sealing its records", () => {
  const ring = new RecordKeyRing([{ id: 'k1', key: randomBytes(32) }]);
  const inner = new MemoryTokenStore();
  const store: TokenStore = {
    get: (key) => inner.get(key),
    put: (key, value, options) => inner.put(key, value, options),
    delete: (key, expectedVersion) => inner.delete(key, expectedVersion),
    renew: (key, ttlMs) => inner.renew(key, ttlMs),
  };
  storeEngineContract(() => engineOf(store, ring));
});

test("a login that ends an older one is written even when the older one's delete fails", async () => {
  const inner = new MemoryTokenStore();
  let deletesFail = false;
  const store: TokenStore = {
    get: (key) => inner.get(key),
    put: (key, value, options) => inner.put(key, value, options),
    delete: (key, expectedVersion) =>
      deletesFail
        ? Promise.reject(new Error('the store is down'))
        : inner.delete(key, expectedVersion),
    renew: (key, ttlMs) => inner.renew(key, ttlMs),
  };
  const { records } = engineOf(store);
  const openId = `player-${randomBytes(4).toString('hex')}`;
  const options = { expectedVersion: null, ttlMs: 60_000 };
  for (let at = 0; at < MAX_INDEXED_LOGINS; at += 1)
    await records.put(newSessionKey(), sampleRecord(1, { openId }), options);
  deletesFail = true;
  const last = newSessionKey();
  await expect(records.put(last, sampleRecord(1, { openId }), options)).resolves.toBe(true);
  expect((await records.get(last)).status).toBe('found');
  expect(await records.loginsOf(openId)).toHaveLength(MAX_INDEXED_LOGINS);
});

const engine = (store: MemoryTokenStore) => engineOf(store);
const put = (store: MemoryTokenStore, key: string, version = 1, ttlMs = 60_000) =>
  engine(store).records.put(key, sampleRecord(version), {
    expectedVersion: version === 1 ? null : version - 1,
    ttlMs,
  });
const status = async (store: MemoryTokenStore, key: string) =>
  (await engine(store).records.get(key)).status;

describe('MemoryTokenStore bounds and expiry', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  test('when full, an unexpired value is never dropped (a code could be sent twice): new ones are refused', async () => {
    const store = new MemoryTokenStore({ maxEntries: 2 });
    const { counters, locks } = engine(store);
    expect(await counters.claimOnce('a', 60_000)).toBe(true);
    expect(await counters.claimOnce('b', 60_000)).toBe(true);
    await expect(counters.claimOnce('c', 60_000)).rejects.toMatchObject({
      status: 503,
      error: 'store_unavailable',
    });
    await expect(locks.acquire(newSessionKey(), 60_000)).rejects.toMatchObject({ status: 503 });
    expect(await counters.claimOnce('a', 60_000)).toBe(false);
    expect(await counters.claimOnce('b', 60_000)).toBe(false);
  });

  test('a full store takes new values again once old ones expire', async () => {
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    const store = new MemoryTokenStore({ maxEntries: 3 });
    for (const key of ['a', 'b', 'c'])
      expect(await engine(store).counters.claimOnce(key, 1_000)).toBe(true);
    await expect(engine(store).counters.claimOnce('d', 1_000)).rejects.toThrow(/maxEntries/);
    jest.setSystemTime(1_700_000_001_000);
    expect(await engine(store).counters.claimOnce('d', 1_000)).toBe(true);
  });

  test('expiry follows the clock, to the millisecond', async () => {
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    const store = new MemoryTokenStore();
    const { counters, locks } = engine(store);
    const key = newSessionKey();
    await put(store, key, 1, 10_000);
    const owner = await locks.acquire(key, 5_000);
    await counters.claimOnce('code', 20_000);
    jest.setSystemTime(1_700_000_004_999);
    expect(await locks.acquire(key, 5_000)).toBeUndefined();
    jest.setSystemTime(1_700_000_005_000);
    expect(await locks.release(key, owner!)).toBe(false);
    jest.setSystemTime(1_700_000_009_999);
    expect(await status(store, key)).toBe('found');
    jest.setSystemTime(1_700_000_010_000);
    expect(await status(store, key)).toBe('absent');
    expect(await counters.claimOnce('code', 20_000)).toBe(false);
    jest.setSystemTime(1_700_000_020_000);
    expect(await counters.claimOnce('code', 20_000)).toBe(true);
  });

  test('no timer is left running: using the store creates no pending handle', async () => {
    const before = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const store = new MemoryTokenStore();
    const key = newSessionKey();
    await put(store, key);
    await engine(store).locks.acquire(key, 60_000);
    await engine(store).counters.claimOnce('k', 60_000);
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

describe('MemoryTokenStore changes', () => {
  test('watchers are told synchronously of a write, a lock release and a delete of their session only', async () => {
    const store = new MemoryTokenStore();
    const { changes, locks, records } = engine(store);
    expect(changes?.live).toBe(true);
    let s1 = 0;
    let s2 = 0;
    const unwatch = changes!.watch('s1', () => (s1 += 1));
    changes!.watch('s2', () => (s2 += 1));
    const toldOf = async (change: () => Promise<unknown>) => {
      const before = s1;
      await change();
      return s1 > before;
    };
    expect(await toldOf(() => put(store, 's1'))).toBe(true);
    const owner = (await locks.acquire('s1', 60_000))!;
    expect(await toldOf(() => locks.release('s1', owner))).toBe(true);
    expect(await toldOf(() => records.delete('s1'))).toBe(true);
    expect(s2).toBe(0);
    unwatch();
    expect(await toldOf(() => put(store, 's1'))).toBe(false);
  });

  test('a watcher that throws does not keep the others from being told', async () => {
    const store = new MemoryTokenStore();
    let told = false;
    store.watch('t:s1', () => {
      throw new Error('boom');
    });
    store.watch('t:s1', () => (told = true));
    await put(store, 's1');
    expect(told).toBe(true);
  });
});

describe('the contract suite catches a store that never expires anything', () => {
  // Every lifetime under a second (the suite's lifetime tests use 30 ms) is kept for 30 s instead:
  // exactly the lifetime tests must fail on it, each once its bounded poll gives up.
  const inner = new MemoryTokenStore();
  const kept = (ttlMs: number): number => (ttlMs > 0 && ttlMs < 1000 ? 30_000 : ttlMs);
  const store: TokenStore = {
    get: (key) => inner.get(key),
    put: (key, value, options) => inner.put(key, value, { ...options, ttlMs: kept(options.ttlMs) }),
    delete: (key, expectedVersion) => inner.delete(key, expectedVersion),
    renew: (key, ttlMs) => inner.renew(key, kept(ttlMs)),
  };

  test('its lifetime tests fail, every other test passes', async () => {
    const tests: Array<{ name: string; body: () => Promise<void> }> = [];
    tokenStoreContract(() => store, {
      testFunctions: {
        describe: (_name, body) => body(),
        test: (name, body) => tests.push({ name, body }),
      },
    });
    const outcomes = await Promise.allSettled(tests.map(({ body }) => body()));
    const failed = tests.filter((_, i) => outcomes[i]!.status === 'rejected').map((t) => t.name);
    expect(failed).toEqual([
      'a value is gone once its lifetime ends, and its key can be written afresh',
      'renew gives a value more time, unchanged; a missing key cannot be renewed',
    ]);
  }, 20_000);
});
