// RedisTokenStore on a 3-master Redis Cluster on loopback, started and stopped by this file: the
// store contract (in the clear and encrypted), one slot per session, sessions spread over nodes, and
// the record cache on (key tracking per master; cluster-cache.test.ts has its faults).
// The stores run on the Cluster client of storeClientKind() (ioredis `Cluster`, or node-redis
// `createCluster()` in the `node-redis` projects); `redis` is an ioredis Cluster for looking inside.
import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import { hashSessionId } from '../../lib/core/hash';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-cluster';
import { sampleRecord, tokenStoreContract } from 'express-platform-login/testing';
import { storedRecord } from '../helpers/records';
import type { RedisClient } from '../../lib/redis/redis-client';
import { DEFAULT_CLIENT_KIND, describeWhere, storeClientKind } from '../helpers/redis-clients';
import { valueOnce, waitUntil } from '../helpers/wait-until';
import { engineOf } from '../../lib/core/derived-engine';

const kind = storeClientKind();

const prefix = 'epl-cluster:';
let cluster: TestRedisCluster;
let redis: Cluster;
/** The client the stores run on. */
let client: RedisClient;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  redis = new Cluster(cluster.nodes, {
    redisOptions: { maxRetriesPerRequest: 1, commandTimeout: 1000 },
  });
  client = await kind.connectCluster(cluster.nodes);
}, 30_000);

afterAll(async () => {
  if (client !== undefined) await kind.quit(client);
  await redis?.quit();
  await cluster?.stop();
});

describe('RedisTokenStore contract on Redis Cluster, in the clear', () => {
  let store: RedisTokenStore;
  beforeAll(() => {
    store = new RedisTokenStore({ redis: client, prefix });
  });
  tokenStoreContract(() => store);
});

// Encryption sits above the command seam: its contract runs once, on the default client.
describeWhere(kind.name === DEFAULT_CLIENT_KIND)(
  'RedisTokenStore contract on Redis Cluster, encrypted',
  () => {
    let store: RedisTokenStore;
    beforeAll(() => {
      store = new RedisTokenStore({
        redis: client,
        prefix,
        encryptionKeys: [{ id: 'k1', key: randomBytes(32) }],
      });
    });
    tokenStoreContract(() => store);
  },
);

describe('RedisTokenStore keys on Redis Cluster', () => {
  test("sessions' records and locks spread over all masters: every call of the engine is on one key", async () => {
    const store = new RedisTokenStore({ redis: client, prefix: 'epl-spread:' });
    // Fixed ids: the slot depends only on the session hash, so the spread is the same every run.
    const sessionIds = Array.from({ length: 30 }, (_, index) => `spread-${index}`);
    for (const sessionId of sessionIds) {
      expect(
        await engineOf(store).records.put(hashSessionId(sessionId), sampleRecord(1), {
          expectedVersion: null,
          ttlMs: 60_000,
        }),
      ).toBe(true);
      expect(await engineOf(store).locks.acquire(hashSessionId(sessionId), 60_000)).toBeDefined();
    }
    for (const kind of ['t', 'l']) {
      const perMaster = await Promise.all(
        redis.nodes('master').map(async (node) => (await node.keys(`epl-spread:${kind}:*`)).length),
      );
      expect(perMaster).toHaveLength(3);
      expect(perMaster.reduce((sum, count) => sum + count, 0)).toBe(30);
      for (const count of perMaster) expect(count).toBeGreaterThan(0);
    }
  });
});

describe('record cache on Redis Cluster', () => {
  test('serves from memory once every master is tracked; a DEL by hand on the node is seen', async () => {
    const store = new RedisTokenStore({ redis: client, prefix: 'epl-cluster-cache:' });
    try {
      await waitUntil(() => store.recordCacheActive, 'the record cache on', 20_000);
      const sessionId = 'cluster-cache-1';
      await engineOf(store).records.put(hashSessionId(sessionId), sampleRecord(1), {
        expectedVersion: null,
        ttlMs: 60_000,
      });
      expect((await storedRecord(store, sessionId))?.version).toBe(1);
      await redis.del(`epl-cluster-cache:t:${hashSessionId(sessionId)}`);
      expect(
        await valueOnce(
          () => storedRecord(store, sessionId),
          (record) => record === undefined,
          1000,
        ),
      ).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
