// RedisTokenStore through a client's Sentinel support (ioredis `new Redis({ sentinels })`, or
// node-redis `createSentinel()` in the `node-redis` projects): the client asks the sentinel for the
// master and the store works on it exactly as on a standalone server. The record cache runs on
// ioredis and node-redis 6 (a Sentinel of its own for the tracking connection); node-redis 5's
// Sentinel has no duplicate(), so there every read goes to Redis and the store says why once.
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import {
  startRedisSentinel,
  SENTINEL_MASTER_NAME,
  type TestRedisSentinel,
} from '../helpers/redis-sentinel';
import { hashSessionId } from '../../lib/core/hash';
import { newSessionKey, sampleRecord, tokenStoreContract } from 'express-platform-login/testing';
import { eventually, valueOnce, waitUntil } from '../helpers/wait-until';
import { storedRecord } from '../helpers/records';
import type { RedisClient } from '../../lib/redis/redis-client';
import { describeWhere, storeClientKind } from '../helpers/redis-clients';
import { engineOf } from '../../lib/core/derived-engine';

const kind = storeClientKind();
/** Whether the client can have a tracking connection that follows the Sentinel's master. */
const tracks = kind.library === 'ioredis' || kind.name.startsWith('node-redis 6');

let sentinel: TestRedisSentinel;
let redis: RedisClient;

beforeAll(async () => {
  sentinel = await startRedisSentinel();
  redis = await kind.connectSentinel(sentinel.sentinels, SENTINEL_MASTER_NAME);
}, 30_000);

afterAll(async () => {
  await kind.quit(redis);
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

describeWhere(tracks)('record cache through Sentinel', () => {
  test('comes on against the master; a DEL typed on the master is seen', async () => {
    const prefix = 'epl-sentinel-cache:';
    const reader = new RedisTokenStore({ redis, prefix });
    const master = new Redis(sentinel.master.url, { maxRetriesPerRequest: 1 });
    try {
      expect(await eventually(() => reader.recordCacheActive)).toBe(true);
      const sessionId = newSessionKey();
      const key = `${prefix}t:${hashSessionId(sessionId)}`;
      await engineOf(reader).records.put(hashSessionId(sessionId), sampleRecord(1), {
        expectedVersion: null,
        ttlMs: 60_000,
      });
      expect((await storedRecord(reader, sessionId))?.version).toBe(1);
      await master.del(key);
      expect(
        await valueOnce(
          () => storedRecord(reader, sessionId),
          (record) => record === undefined,
        ),
      ).toBeUndefined();
    } finally {
      master.disconnect();
      await reader.close();
    }
  });
});

describeWhere(!tracks)("record cache through node-redis 5's Sentinel", () => {
  test('stays off and says why once; reads go to the master', async () => {
    const prefix = 'epl-sentinel-nocache:';
    const reader = new RedisTokenStore({ redis, prefix });
    const reasons: string[] = [];
    reader.on('recordCacheUnavailable', ({ reason }) => reasons.push(reason));
    const master = new Redis(sentinel.master.url, { maxRetriesPerRequest: 1 });
    try {
      await waitUntil(() => reasons.length === 1, 'the reason');
      expect(reasons[0]).toMatch(/Sentinel/);
      const sessionId = newSessionKey();
      await engineOf(reader).records.put(hashSessionId(sessionId), sampleRecord(1), {
        expectedVersion: null,
        ttlMs: 60_000,
      });
      expect((await storedRecord(reader, sessionId))?.version).toBe(1);
      await master.del(`${prefix}t:${hashSessionId(sessionId)}`);
      expect(await storedRecord(reader, sessionId)).toBeUndefined();
      expect(reader.recordCacheActive).toBe(false);
    } finally {
      master.disconnect();
      await reader.close();
    }
  });
});
