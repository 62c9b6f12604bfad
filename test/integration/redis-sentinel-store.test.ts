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
import { tokenStoreContract } from 'express-platform-login/testing';

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
