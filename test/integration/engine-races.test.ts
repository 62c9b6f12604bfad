// The engine on RedisTokenStore where its steps meet others: a lock that lapsed and was taken
// again, a login written while logoutPlayer() runs, and values the package never writes (by hand,
// by another program) under its keys.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { newSessionKey, sampleRecord } from 'express-platform-login/testing';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import { deriveEngine, engineOf } from '../../lib/core/derived-engine';
import { beginEntry } from '../../lib/core/entry-begin';
import { playerKeyOf } from '../../lib/core/player-key';
import { storeKeys } from '../../lib/core/store-keys';
import { STORE_FAST_PATHS, type StoreEngine } from '../../lib/core/store-engine';
import type { TokenStore } from '../../lib/core/token-store';
import type { RedisClient } from '../../lib/redis/redis-client';
import { useStoreClients } from '../helpers/bed';

const prefix = `races-${randomUUID().slice(0, 8)}:`;
let redis: Redis;
let client: RedisClient;
useStoreClients(prefix, (clients) => ({ redis, client } = clients));

let store: RedisTokenStore;
let engine: StoreEngine;
beforeAll(() => {
  store = new RedisTokenStore({ redis: client, prefix });
  engine = engineOf(store);
});
afterAll(() => store.close());

/** The store, with its `nth` read of a key `when` picks held after it is made until `open()`. */
function paused(when: (key: string) => boolean, nth = 1) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let reached!: () => void;
  const at = new Promise<void>((resolve) => (reached = resolve));
  const reads: string[] = [];
  let seen = 0;
  const gated: TokenStore = {
    get: async (key) => {
      const value = await store.get(key);
      reads.push(key);
      if (when(key) && ++seen === nth) {
        reached();
        await gate;
      }
      return value;
    },
    put: (key, value, options) => store.put(key, value, options),
    delete: (key, expectedVersion) => store.delete(key, expectedVersion),
    renew: (key, ttlMs) => store.renew(key, ttlMs),
  };
  return { gated, at, open, reads };
}

const entryOf = (address: string) => ({
  failureKey: address,
  failedKey: `${address}:failed`,
  failureLimit: 5,
  failureWindowMs: 600_000,
  holdKey: `hold-${randomUUID()}`,
  holdVersion: 1,
  probeKey: `probe-${randomUUID()}`,
  probeTtlMs: 5_000,
  budgetKey: undefined,
  budgetPerSecond: 1,
  claimKey: `code-${randomUUID()}`,
  claimTtlMs: 60_000,
});

test("a lock's old owner, after its lock lapsed and was taken again, neither releases nor extends it; on Redis each is one step", async () => {
  const sessionKey = newSessionKey();
  const mine = await engine.locks.acquire(sessionKey, 30_000);
  await redis.del(prefix + storeKeys.lock(sessionKey)); // the lock lapses
  const theirs = await engine.locks.acquire(sessionKey, 30_000);
  expect(theirs).toBeDefined();
  // With the store's fast paths, neither reads the lock first: there is no moment in between.
  const { gated, reads } = paused(() => false);
  const oldOwner = deriveEngine(gated, undefined, store[STORE_FAST_PATHS]);
  expect(await oldOwner.locks.extend(sessionKey, mine!, 30_000)).toBe(false);
  expect(await oldOwner.locks.release(sessionKey, mine!)).toBe(false);
  expect(reads).toEqual([]);
  expect(await engine.locks.acquire(sessionKey, 30_000)).toBeUndefined();
  expect(await engine.locks.release(sessionKey, theirs!)).toBe(true);
});

test('a login written while logoutPlayer() runs stays in the player index', async () => {
  const record = sampleRecord(1, { openId: `races-${randomUUID()}` });
  const player = playerKeyOf(record);
  const loginGeneration = await engine.records.loginGeneration();
  const ttl = { expectedVersion: null, ttlMs: 60_000, loginGeneration };
  await engine.records.put(newSessionKey(), record, ttl);
  // Held at its second read of the index: the logins listed and deleted, the index not yet written.
  const { gated, at, open } = paused((key) => key === storeKeys.player(player), 2);
  const loggingOut = deriveEngine(gated).records.deletePlayer(player);
  await at;
  const late = newSessionKey();
  const since = await engine.records.loginGeneration(); // read after the log-out began
  expect(await engine.records.put(late, record, { ...ttl, loginGeneration: since })).toBe(true);
  open();
  expect(await loggingOut).toBe(1);
  const logins = await engine.records.loginsOf(player);
  expect(logins.map((login) => login.sessionKey)).toEqual([late]);
  expect(await engine.records.deletePlayer(player)).toBe(1);
});

describe('values the package never writes, under its keys', () => {
  test('a counter stored otherwise (another program, a hand) reads as none: the entry goes on, on both paths', async () => {
    for (const checks of [engine, deriveEngine(store)]) {
      const address = `races-${randomUUID()}`;
      await redis.set(prefix + storeKeys.counter(address), '2', 'PX', 600_000);
      await expect(beginEntry(checks, entryOf(address))).resolves.toMatchObject({
        stopped: undefined,
        claimed: true,
      });
    }
  });

  test('a counter without a lifetime counts as a whole window, on both paths', async () => {
    const answers = [];
    for (const checks of [engine, deriveEngine(store)]) {
      const address = `races-${randomUUID()}`;
      await redis.set(prefix + storeKeys.counter(address), '1|2');
      answers.push(await beginEntry(checks, entryOf(address)));
      expect(await redis.pttl(prefix + storeKeys.counter(address))).toBeGreaterThan(500_000);
    }
    expect(answers[1]).toEqual(answers[0]);
  });

  test("a player's index that is not an object keeps the next login indexed", async () => {
    const record = sampleRecord(1, { openId: `races-${randomUUID()}` });
    const player = playerKeyOf(record);
    await redis.set(prefix + storeKeys.player(player), '1|[]', 'PX', 60_000);
    const sessionKey = newSessionKey();
    await engine.records.put(sessionKey, record, { expectedVersion: null, ttlMs: 60_000 });
    const logins = await engine.records.loginsOf(player);
    expect(logins.map((login) => login.sessionKey)).toEqual([sessionKey]);
  });
});
