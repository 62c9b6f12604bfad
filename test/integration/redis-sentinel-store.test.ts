// RedisTokenStore through ioredis's Sentinel support: the client asks the sentinel for the master
// and the store works on it exactly as on a standalone server.
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import {
  startRedisSentinel,
  SENTINEL_MASTER_NAME,
  type TestRedisSentinel,
} from '../helpers/redis-sentinel';
import { hashSessionId } from '../../lib/core/hash';
import { newSessionId, sampleRecord, tokenStoreContract } from 'express-platform-login/testing';
import { waitUntil } from '../helpers/wait-until';
import { storedRecord } from '../helpers/records';

let sentinel: TestRedisSentinel;
let redis: Redis;

beforeAll(async () => {
  sentinel = await startRedisSentinel();
  redis = new Redis({
    sentinels: sentinel.sentinels,
    name: SENTINEL_MASTER_NAME,
    maxRetriesPerRequest: 1,
  });
}, 30_000);

afterAll(async () => {
  redis.disconnect();
  await sentinel.stop();
});

describe('RedisTokenStore contract through Sentinel, encrypted', () => {
  let store: RedisTokenStore;
  beforeAll(() => {
    store = new RedisTokenStore({
      redis,
      prefix: 'epl-sentinel:',
      encryptionKeys: [{ id: 'k1', key: randomBytes(32) }],
    });
  });
  tokenStoreContract(() => store);

  test('the records land on the master the sentinel names', async () => {
    const master = new Redis(sentinel.master.url);
    try {
      expect((await master.keys('epl-sentinel:*')).length).toBeGreaterThan(0);
    } finally {
      master.disconnect();
    }
  });
});

describe('record cache through Sentinel', () => {
  test('comes on against the master; a DEL typed on the master is seen', async () => {
    const prefix = 'epl-sentinel-cache:';
    const reader = new RedisTokenStore({ redis, prefix });
    const master = new Redis(sentinel.master.url, { maxRetriesPerRequest: 1 });
    try {
      await waitUntil(() => reader.recordCacheActive, 'the record cache to come on');
      const sessionId = newSessionId();
      const key = `${prefix}{${hashSessionId(sessionId)}}:t`;
      await reader.records.put(hashSessionId(sessionId), sampleRecord(1), {
        expectedVersion: null,
        ttlMs: 60_000,
      });
      await waitUntil(
        async () => (await storedRecord(reader, sessionId))?.version === 1,
        'the record to be read',
      );
      await master.del(key);
      await waitUntil(
        async () => (await storedRecord(reader, sessionId)) === undefined,
        'the DEL to be seen',
      );
    } finally {
      master.disconnect();
      await reader.close();
    }
  });
});
