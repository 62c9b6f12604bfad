// RedisTokenStore on the standalone redis-server of the integration run: the store contract in the
// clear and encrypted, the key layout, the TTL cap, and what an attacker with Redis access sees.
// The stores run on the client of storeClientKind() (ioredis, or node-redis in the `node-redis`
// projects); `redis` below is a plain ioredis connection for looking at Redis from outside.
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { hashSessionId } from '../../lib/core/hash';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import type { PutOptions } from '../../lib/core/store-engine';
import type { TokenRecord } from '../../lib/core/token-record';
import { newSessionKey, sampleRecord, tokenStoreContract } from 'express-platform-login/testing';
import type { RedisClient } from '../../lib/redis/redis-client';
import { DEFAULT_CLIENT_KIND, describeWhere, storeClientKind } from '../helpers/redis-clients';
import { useStoreClients } from '../helpers/bed';
import { storedRecord } from '../helpers/records';
import { engineOf } from '../../lib/core/derived-engine';

/** A read the store answered `unreadable`: the session key and why. */
interface Unreadable {
  sessionHash: string;
  reason: string;
}

/** Unique per run of this file, so other test files on the same Redis never collide with it. */
const prefix = `epl-test-${randomUUID().slice(0, 8)}:`;
const key1 = { id: 'k1', key: randomBytes(32).toString('base64') };
const key2 = { id: 'k2', key: randomBytes(32) };
const LONG_TTL_MS = 60_000;

const kind = storeClientKind();
let redis: Redis;
/** The client the stores run on. */
let client: RedisClient;
useStoreClients(prefix, (clients) => ({ redis, client } = clients));

const recordKey = (sessionId: string): string => `${prefix}t:${hashSessionId(sessionId)}`;
const lockKey = (sessionId: string): string => `${prefix}l:${hashSessionId(sessionId)}`;

// These tests name sessions by their session ids, as a browser's cookie does (the store is keyed
// by their hash, which the middleware computes once per request).
const put = (store: RedisTokenStore, sessionId: string, record: TokenRecord, options: PutOptions) =>
  engineOf(store).records.put(hashSessionId(sessionId), record, options);
const get = storedRecord;

/** Collects the reads a store answered `unreadable` (not absent: another process may read them). */
function watchUnreadable(store: RedisTokenStore): Unreadable[] {
  const events: Unreadable[] = [];
  const records = engineOf(store).records;
  const read = records.get.bind(records);
  records.get = async (sessionKey) => {
    const answer = await read(sessionKey);
    if (answer.status === 'unreadable')
      events.push({ sessionHash: sessionKey, reason: answer.reason });
    return answer;
  };
  return events;
}

describe(`RedisTokenStore contract on ${kind.name}, in the clear`, () => {
  let store: RedisTokenStore;
  beforeAll(() => {
    store = new RedisTokenStore({ redis: client, prefix });
  });
  afterAll(() => store.close());
  tokenStoreContract(() => store);
});

// Encryption sits above the command seam: its contract runs once, on the default client.
describeWhere(kind.name === DEFAULT_CLIENT_KIND)(
  `RedisTokenStore contract on ${kind.name}, encrypted`,
  () => {
    let store: RedisTokenStore;
    beforeAll(() => {
      store = new RedisTokenStore({ redis: client, prefix, encryptionKeys: [key1] });
    });
    afterAll(() => store.close());
    tokenStoreContract(() => store);
  },
);

describe('RedisTokenStore keys and lifetimes', () => {
  let store: RedisTokenStore;
  beforeAll(() => {
    store = new RedisTokenStore({ redis: client, prefix, maxRecordTtlSeconds: 60 });
  });
  afterAll(() => store.close());

  test('keys hold a hash of the session id, never the id itself', async () => {
    const sessionId = newSessionKey();
    await put(store, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: 30_000 });
    await engineOf(store).locks.acquire(hashSessionId(sessionId), 30_000);
    const keys = (await redis.keys(`${prefix}*${hashSessionId(sessionId)}*`)).sort();
    expect(keys).toEqual([lockKey(sessionId), recordKey(sessionId)].sort());
    expect(await redis.keys(`*${sessionId}*`)).toEqual([]);
  });

  test('a record lives for its TTL, capped at maxRecordTtlSeconds', async () => {
    const [short, long] = [newSessionKey(), newSessionKey()];
    await put(store, short, sampleRecord(1), { expectedVersion: null, ttlMs: 20_000 });
    await put(store, long, sampleRecord(1), { expectedVersion: null, ttlMs: 90 * 86_400_000 });
    const shortTtl = await redis.pttl(recordKey(short));
    const longTtl = await redis.pttl(recordKey(long));
    expect(shortTtl).toBeGreaterThan(10_000);
    expect(shortTtl).toBeLessThanOrEqual(20_000);
    expect(longTtl).toBeGreaterThan(50_000);
    expect(longTtl).toBeLessThanOrEqual(60_000);
  });

  test('code claims live under the prefix with their TTL', async () => {
    const key = `code:${randomUUID()}`;
    expect(await engineOf(store).counters.claimOnce(key, 600_000)).toBe(true);
    expect(await redis.pttl(`${prefix}k:${key}`)).toBeGreaterThan(590_000);
  });

  test('the scripts are loaded again when Redis lost them (NOSCRIPT)', async () => {
    const sessionId = newSessionKey();
    await redis.script('FLUSH');
    expect(
      await put(store, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: 30_000 }),
    ).toBe(true);
    await redis.script('FLUSH');
    expect(
      await engineOf(store).records.delete(hashSessionId(sessionId), { expectedVersion: 1 }),
    ).toBe(true);
    const owner = await engineOf(store).locks.acquire(hashSessionId(sessionId), 30_000);
    await redis.script('FLUSH');
    expect(await engineOf(store).locks.release(hashSessionId(sessionId), owner!)).toBe(true);
  });

  test('a corrupted record reads as unreadable (parse), not as absent; a value the store never wrote reads as none', async () => {
    const events = watchUnreadable(store);
    const [garbage, badPayload] = [newSessionKey(), newSessionKey()];
    await redis.set(recordKey(garbage), 'not a record', 'PX', 30_000);
    await redis.set(recordKey(badPayload), '3|p{"accessToken":"x"}', 'PX', 30_000);
    expect(await get(store, garbage)).toBeUndefined();
    expect(await get(store, badPayload)).toBeUndefined();
    expect(events).toEqual([{ sessionHash: hashSessionId(badPayload), reason: 'parse' }]);
  });

  test('the store never closes the client it was given', async () => {
    const sessionId = newSessionKey();
    await get(store, sessionId);
    await store.close();
    expect(await kind.ping(client)).toBe('PONG');
  });
});

describe('RedisTokenStore encryption at rest', () => {
  let store: RedisTokenStore;
  let events: Unreadable[];
  beforeEach(() => {
    store = new RedisTokenStore({ redis: client, prefix, encryptionKeys: [key1] });
    events = watchUnreadable(store);
  });
  // Each store follows the shared client's end (one listener each): closed, it lets go.
  afterEach(() => store.close());

  test('no token, openId or session id appears in plain anywhere in the keyspace', async () => {
    const written = Array.from({ length: 5 }, () => ({
      id: newSessionKey(),
      record: sampleRecord(1),
    }));
    for (const { id, record } of written) {
      await put(store, id, record, { expectedVersion: null, ttlMs: LONG_TTL_MS });
    }
    const secrets = written.flatMap(({ id, record }) => [
      record.accessToken,
      record.refreshToken,
      record.openId,
      record.unionId!,
      id,
    ]);
    const contents: Buffer[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        contents.push(Buffer.from(key));
        const type = await redis.type(key);
        if (type === 'string') contents.push((await redis.getBuffer(key)) ?? Buffer.alloc(0));
        else if (type === 'hash') contents.push(...(await redis.hvalsBuffer(key)));
      }
    } while (cursor !== '0');
    expect(contents.length).toBeGreaterThanOrEqual(written.length * 2);
    for (const secret of secrets) {
      const needle = Buffer.from(secret);
      expect(contents.filter((content) => content.includes(needle))).toEqual([]);
    }
    // …while the store itself reads every record back.
    for (const { id, record } of written) expect(await get(store, id)).toEqual(record);
  });

  test('a tampered ciphertext reads as unreadable (decrypt)', async () => {
    const sessionId = newSessionKey();
    await put(store, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: LONG_TTL_MS });
    const stored = (await redis.getBuffer(recordKey(sessionId)))!;
    const tampered = Buffer.from(stored);
    tampered[tampered.length - 20] = tampered[tampered.length - 20]! ^ 0x01;
    await redis.set(recordKey(sessionId), tampered, 'KEEPTTL');
    expect(await get(store, sessionId)).toBeUndefined();
    expect(events).toEqual([{ sessionHash: hashSessionId(sessionId), reason: 'decrypt' }]);
  });

  test('a changed version prefix changes no version the package reads: it is sealed in the record', async () => {
    const sessionId = newSessionKey();
    const [first, second] = [sampleRecord(1), sampleRecord(2)];
    await put(store, sessionId, first, { expectedVersion: null, ttlMs: LONG_TTL_MS });
    const stored = (await redis.get(recordKey(sessionId)))!;
    await redis.set(recordKey(sessionId), `9${stored.slice(1)}`);
    expect(await get(store, sessionId)).toEqual(first);
    // A refresh over the version the package read still writes; one over the forged one does not.
    const over = (version: number) => ({ expectedVersion: version, ttlMs: LONG_TTL_MS });
    expect(await put(store, sessionId, sampleRecord(10), over(9))).toBe(false);
    expect(await put(store, sessionId, second, over(1))).toBe(true);
    expect(await get(store, sessionId)).toEqual(second);
    expect(events).toEqual([]);
  });

  test("a record copied or renamed to another session's key does not read there", async () => {
    const [victim, attacker, other] = [newSessionKey(), newSessionKey(), newSessionKey()];
    const record = sampleRecord(1);
    await put(store, victim, record, { expectedVersion: null, ttlMs: LONG_TTL_MS });
    await redis.copy(recordKey(victim), recordKey(attacker));
    expect(await get(store, attacker)).toBeUndefined();
    expect(await get(store, victim)).toEqual(record);
    await redis.rename(recordKey(victim), recordKey(other));
    expect(await get(store, other)).toBeUndefined();
    expect(await get(store, victim)).toBeUndefined();
    expect(events).toEqual([
      { sessionHash: hashSessionId(attacker), reason: 'decrypt' },
      { sessionHash: hashSessionId(other), reason: 'decrypt' },
    ]);
  });

  test('rotation: the old key still reads, the next write uses the new key', async () => {
    const sessionId = newSessionKey();
    const first = sampleRecord(1);
    await put(store, sessionId, first, { expectedVersion: null, ttlMs: LONG_TTL_MS });
    const rotated = new RedisTokenStore({ redis: client, prefix, encryptionKeys: [key2, key1] });
    expect(await get(rotated, sessionId)).toEqual(first);
    const second = sampleRecord(2);
    expect(await put(rotated, sessionId, second, { expectedVersion: 1, ttlMs: LONG_TTL_MS })).toBe(
      true,
    );
    // `<version>|sealed:` and the sealed bytes, base64url, which start with the sealing key's id.
    const [version, sealed] = (await redis.get(recordKey(sessionId)))!.split('|sealed:');
    expect(version).toBe('2');
    expect(Buffer.from(sealed!, 'base64url').subarray(0, 3).toString('latin1')).toBe('k2|');
    expect(await get(rotated, sessionId)).toEqual(second);
    // A process still on the old ring cannot open it, and says why.
    expect(await get(store, sessionId)).toBeUndefined();
    expect(events).toEqual([{ sessionHash: hashSessionId(sessionId), reason: 'unknown_key' }]);
    await rotated.close();
  });

  test('a record stored in the clear is refused by an encrypting store, and the reverse', async () => {
    const plainStore = new RedisTokenStore({ redis: client, prefix });
    const plainEvents = watchUnreadable(plainStore);
    const [plain, sealed] = [newSessionKey(), newSessionKey()];
    await put(plainStore, plain, sampleRecord(1), { expectedVersion: null, ttlMs: LONG_TTL_MS });
    await put(store, sealed, sampleRecord(1), { expectedVersion: null, ttlMs: LONG_TTL_MS });
    expect(await get(store, plain)).toBeUndefined();
    expect(await get(plainStore, sealed)).toBeUndefined();
    expect(events).toEqual([{ sessionHash: hashSessionId(plain), reason: 'decrypt' }]);
    expect(plainEvents).toEqual([{ sessionHash: hashSessionId(sealed), reason: 'unknown_key' }]);
    await plainStore.close();
  });

  test('compare-and-set still works on sealed records: the version is readable by Lua', async () => {
    const sessionId = newSessionKey();
    await put(store, sessionId, sampleRecord(1), { expectedVersion: null, ttlMs: LONG_TTL_MS });
    expect(
      await put(store, sessionId, sampleRecord(2), { expectedVersion: 2, ttlMs: LONG_TTL_MS }),
    ).toBe(false);
    expect(
      await engineOf(store).records.delete(hashSessionId(sessionId), { expectedVersion: 2 }),
    ).toBe(false);
    expect(
      await engineOf(store).records.delete(hashSessionId(sessionId), { expectedVersion: 1 }),
    ).toBe(true);
  });
});
