// ioredis 6 (the `ioredis6` alias, npm:ioredis@^6, imported by name: no module mapping) speaking
// RESP3, and what RESP3 could change that the per-kind suites do not already cover: the store
// contract with `replyMapping: 'resp3'` (maps as objects, doubles as numbers; the default `legacy`
// mapping is the `ioredis 6 (RESP3)` client kind, whose contract runs in redis-store.test.ts under
// the `ioredis6` project), connect-redis 8.1's calls with both mappings, and the start-up check that
// reads CONFIG GET (a map reply under RESP3).
import { randomUUID } from 'node:crypto';
import { engineOf } from '../../lib/core/derived-engine';
import { Redis } from 'ioredis6';
import ioredisPackage from 'ioredis6/package.json';
import { RedisStore } from 'connect-redis8';
import type { SessionData } from 'express-session';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import type { RedisClient } from '../../lib/redis/redis-client';
import { checkSetup } from '../../lib/setup/setup-checks';
import { newSessionKey, sampleRecord, tokenStoreContract } from 'express-platform-login/testing';
import { startRedisServer } from '../helpers/redis-server';

const prefix = `epl-io6-${randomUUID().slice(0, 8)}:`;
const OPTIONS = { maxRetriesPerRequest: 1, commandTimeout: 1000 };

// Both mappings ioredis 6 offers on RESP3; `legacy` is its default.
const clients = {
  legacy: new Redis(process.env.REDIS_URL!, OPTIONS),
  resp3: new Redis(process.env.REDIS_URL!, { ...OPTIONS, replyMapping: 'resp3' }),
};

afterAll(async () => {
  const keys = await clients.legacy.keys(`${prefix}*`);
  if (keys.length > 0) await clients.legacy.del(...keys);
  await Promise.all(Object.values(clients).map((client) => client.quit()));
});

test('the `ioredis6` alias is ioredis 6, and its connections speak RESP3', async () => {
  expect(ioredisPackage.version).toMatch(/^6\./);
  for (const client of Object.values(clients)) {
    expect(String(await client.call('CLIENT', 'INFO'))).toMatch(/\bresp=3\b/);
  }
});

describe.each(['resp3'] as const)(
  'RedisTokenStore contract on RESP3, replyMapping %s',
  (mapping) => {
    let store: RedisTokenStore;
    beforeAll(() => {
      store = new RedisTokenStore({
        redis: clients[mapping] as unknown as RedisClient,
        prefix: `${prefix}${mapping}:`,
      });
    });
    tokenStoreContract(() => store);

    test('the player index counts and logs out sessions', async () => {
      const openId = `io6-${randomUUID()}`;
      const sessions = [newSessionKey(), newSessionKey()];
      for (const sessionKey of sessions) {
        await engineOf(store).records.put(sessionKey, sampleRecord(1, { openId }), {
          expectedVersion: null,
          ttlMs: 60_000,
        });
      }
      expect((await engineOf(store).records.loginsOf(openId)).length).toBe(2);
      expect(await engineOf(store).records.deletePlayer(openId)).toBe(2);
      expect(await engineOf(store).records.get(sessions[0]!)).toEqual({ status: 'absent' });
      expect(await engineOf(store).records.loginsOf(openId)).toEqual([]);
    });
  },
);

describe.each(Object.keys(clients) as Array<keyof typeof clients>)(
  'connect-redis 8.1 on ioredis 6, replyMapping %s',
  (mapping) => {
    test('a session is stored, read, touched, listed and destroyed', async () => {
      const sessionPrefix = `${prefix}sess-${mapping}:`;
      const store = new RedisStore({ client: clients[mapping], prefix: sessionPrefix });
      // Without a callback, connect-redis 8.1's methods return promises.
      const session = {
        cookie: { originalMaxAge: 60_000, expires: new Date(Date.now() + 60_000) },
        player: 'ada',
      } as unknown as SessionData;
      await store.set('sid-1', session);
      expect(await store.get('sid-1')).toMatchObject({ player: 'ada' });
      const ttl = await clients.legacy.ttl(`${sessionPrefix}sid-1`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60);
      await store.touch('sid-1', session);
      expect(await store.length()).toBe(1);
      expect(await store.ids()).toEqual(['sid-1']);
      expect(await store.all()).toMatchObject([{ player: 'ada' }]);
      await store.destroy('sid-1');
      expect(await store.get('sid-1')).toBeNull();
    });
  },
);

test('the eviction check reads CONFIG GET as a map under replyMapping resp3', async () => {
  const server = await startRedisServer([
    '--maxmemory',
    '64mb',
    '--maxmemory-policy',
    'allkeys-lru',
  ]);
  const redis = new Redis(server.url, { ...OPTIONS, replyMapping: 'resp3' });
  try {
    const problems = await checkSetup({ redis, warn: () => undefined });
    expect(problems.map((problem) => problem.check)).toEqual(['redis-evicts-keys']);
  } finally {
    redis.disconnect();
    await server.stop();
  }
});
