// RedisTokenStore's hygiene: a player's index loses a session at once on logout, a login racing
// logoutPlayer() does not survive it, records sealed before per-record keys still open, and
// production refuses tokens in the clear unless the app opts out.
import { randomBytes, randomUUID, createCipheriv } from 'node:crypto';
import { Redis } from 'ioredis';
import type { RedisClient } from '../../lib/stores/redis/redis-client';
import { interceptCommands, storeClientKind, testWhere } from '../helpers/redis-clients';
import { hashOpenId, hashSessionId } from '../../lib/core/hash';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import { PUT_IF_VERSION, PUT_LOGIN } from '../../lib/stores/scripts';
import { encodeRecordPayload } from '../../lib/stores/record-codec';
import { checkSetup } from '../../lib/setup/setup-checks';
import { SetupError } from '../../lib/errors';
import { newSessionKey, sampleRecord } from 'express-platform-login/testing';
import { storedRecord } from '../helpers/records';
import { useStoreClients } from '../helpers/bed';

const prefix = `hyg-${randomUUID().slice(0, 8)}:`;
const LONG_TTL_MS = 60_000;
const kind = storeClientKind();
/** A plain ioredis connection for looking at Redis from outside. */
let redis: Redis;
/** The client the stores run on (ioredis, or node-redis in the `node-redis` projects). */
let client: RedisClient;
useStoreClients(prefix, (clients) => ({ redis, client } = clients));

const indexKey = (openId: string): string => `${prefix}p:{${hashOpenId(openId)}}`;

test("a logout (delete with the openId) takes the session out of the player's index at once", async () => {
  const store = new RedisTokenStore({ redis: client, prefix });
  const record = sampleRecord(1);
  const sessionId = newSessionKey();
  await store.records.put(hashSessionId(sessionId), record, {
    expectedVersion: null,
    ttlMs: LONG_TTL_MS,
  });
  expect(await redis.zrange(indexKey(record.openId), '0', '-1')).toEqual([
    hashSessionId(sessionId),
  ]);
  await store.records.delete(hashSessionId(sessionId), { openId: record.openId });
  expect(await redis.zrange(indexKey(record.openId), '0', '-1')).toEqual([]);
});

/** `client`, with the script of `sha` held back until `open()` is called. */
function gatedScript(sha: string): { gated: typeof client; open: () => void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const gated = interceptCommands(
    client,
    (args) => args[0] === 'EVALSHA' && args[1] === sha,
    async (send) => {
      await gate;
      return send();
    },
  );
  return { gated, open };
}

// On a Cluster a login's index, log-out check and record write are three calls (their keys live in
// different slots): the race between them is played on an ioredis client that says it is one (the
// seam then takes the Cluster's path; every key is on this one server all the same).
testWhere(kind.library === 'ioredis')(
  'on a Cluster, a login whose record is written after logoutPlayer() scanned the index takes itself back',
  async () => {
    // The login's record write waits, through a gate on this client, until the log-out has run.
    const { gated, open } = gatedScript(PUT_IF_VERSION.sha);
    const asCluster = new Proxy(gated, {
      get: (target, property) =>
        property === 'isCluster' ? true : (Reflect.get(target, property, target) as unknown),
    });
    const loginStore = new RedisTokenStore({ redis: asCluster, prefix });
    const logoutStore = new RedisTokenStore({ redis: client, prefix });
    const record = sampleRecord(1);
    const sessionId = newSessionKey();

    const login = loginStore.records.put(hashSessionId(sessionId), record, {
      expectedVersion: null,
      ttlMs: LONG_TTL_MS,
    });
    // The login has indexed itself (its record not written yet) when the log-out runs.
    for (let i = 0; i < 100 && (await redis.zcard(indexKey(record.openId))) === 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await logoutStore.records.deletePlayer(record.openId)).toBe(0);
    open();
    expect(await login).toBe(false);
    expect(await storedRecord(logoutStore, sessionId)).toBeUndefined();
    // A login after the log-out is kept.
    const later = newSessionKey();
    expect(
      await logoutStore.records.put(
        hashSessionId(later),
        { ...record },
        { expectedVersion: null, ttlMs: LONG_TTL_MS },
      ),
    ).toBe(true);
    expect(await storedRecord(logoutStore, later)).toBeDefined();
  },
);

test('elsewhere a login is one script: a logoutPlayer() while it waits comes wholly before it', async () => {
  // The login's one command waits, through a gate on this client, until the log-out has run.
  const { gated, open } = gatedScript(PUT_LOGIN.sha);
  const loginStore = new RedisTokenStore({ redis: gated, prefix });
  const logoutStore = new RedisTokenStore({ redis: client, prefix });
  const record = sampleRecord(1);
  const [entering, later] = [newSessionKey(), newSessionKey()];
  // One entry read the generation before its exchange; the other is a login without one.
  const loginGeneration = await loginStore.records.loginGeneration();
  const entry = loginStore.records.put(hashSessionId(entering), record, {
    expectedVersion: null,
    ttlMs: LONG_TTL_MS,
    loginGeneration,
  });
  const plain = loginStore.records.put(
    hashSessionId(later),
    { ...record },
    {
      expectedVersion: null,
      ttlMs: LONG_TTL_MS,
    },
  );
  expect(await logoutStore.records.deletePlayer(record.openId)).toBe(0);
  open();
  // The entry under way when the player was logged out everywhere is refused; a put that came
  // wholly after the log-out is a later login, kept.
  expect(await entry).toBe(false);
  expect(await storedRecord(logoutStore, entering)).toBeUndefined();
  expect(await plain).toBe(true);
  expect(await storedRecord(logoutStore, later)).toBeDefined();
});

test('a record sealed under the ring key itself (before per-record keys) still reads', async () => {
  const key = randomBytes(32);
  const store = new RedisTokenStore({ redis: client, prefix, encryptionKeys: [{ id: 'k1', key }] });
  const sessionId = newSessionKey();
  const record = sampleRecord(3);
  const redisKey = `${prefix}{${hashSessionId(sessionId)}}:t`;
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(`${redisKey}|3`));
  const body = Buffer.concat([cipher.update(encodeRecordPayload(record)), cipher.final()]);
  const sealed = Buffer.concat([Buffer.from('3|ek1|'), nonce, body, cipher.getAuthTag()]);
  await redis.set(redisKey, sealed, 'PX', LONG_TTL_MS);
  expect(await storedRecord(store, sessionId)).toEqual(record);
});

describe('NODE_ENV=production', () => {
  const saved = process.env.NODE_ENV;
  beforeEach(() => (process.env.NODE_ENV = 'production'));
  afterEach(() => (process.env.NODE_ENV = saved));

  test('refuses a RedisTokenStore without encryptionKeys, naming the fix and the opt-out', () => {
    const create = () => new RedisTokenStore({ redis: client, prefix });
    expect(create).toThrow(/encryptionKeys.*openssl rand -base64 32.*allowPlaintextTokens: true/);
    // A setup refusal like every other made at creation, naming the option.
    expect(create).toThrow(
      expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'encryptionKeys' }),
    );
    expect(create).toThrow(SetupError);
    expect(
      () => new RedisTokenStore({ redis: client, prefix, allowPlaintextTokens: true }),
    ).not.toThrow();
    const key = randomBytes(32);
    expect(
      () => new RedisTokenStore({ redis: client, prefix, encryptionKeys: [{ id: 'k1', key }] }),
    ).not.toThrow();
  });

  test('checkSetup reports a plaintext store as an error in production, a warning elsewhere', async () => {
    const tokenStore = new RedisTokenStore({ redis: client, prefix, allowPlaintextTokens: true });
    await expect(checkSetup({ tokenStore })).rejects.toThrow(/in the clear/);
    const warnings: string[] = [];
    const problems = await checkSetup({
      tokenStore,
      production: false,
      warn: (message) => warnings.push(message),
    });
    expect(problems.map((p) => [p.check, p.severity])).toEqual([
      ['plaintext-token-store', 'warning'],
    ]);
    expect(warnings).toHaveLength(1);
  });
});

test('a patterned key is refused whatever NODE_ENV says, by the store and by checkSetup', async () => {
  const patterned = Buffer.alloc(32, 0x41).toString('base64');
  expect(
    () =>
      new RedisTokenStore({
        redis: client,
        prefix,
        encryptionKeys: [{ id: 'k1', key: patterned }],
      }),
  ).toThrow(/not random.*openssl rand -base64 32/);
  await expect(
    checkSetup({ encryptionKeys: [{ id: 'k1', key: patterned }], production: false }),
  ).rejects.toThrow(/"k1" is not a random 32-byte key/);
  await expect(
    checkSetup({ encryptionKeys: [{ id: 'k1', key: randomBytes(32) }], production: false }),
  ).resolves.toEqual([]);
});
