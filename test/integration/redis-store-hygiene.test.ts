// RedisTokenStore's hygiene: a logged-out session leaves the player's logins, a login racing
// logoutPlayer() does not survive it, a record in the clear is refused beside keys, production
// refuses tokens in the clear unless the app opts out, and a closed store opens no connection.
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { redisCommands, type RedisClient } from '../../lib/redis/redis-client';
import { interceptCommands, storeClientKind, testWhere } from '../helpers/redis-clients';
import { hashSessionId } from '../../lib/core/hash';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import { PUT_IF_VERSION, PUT_NEW_LOGIN } from '../../lib/stores/scripts';
import { checkSetup } from '../../lib/setup/setup-checks';
import { SetupError } from '../../lib/errors';
import { newSessionKey, sampleRecord } from 'express-platform-login/testing';
import { storedRecord } from '../helpers/records';
import { useStoreClients } from '../helpers/bed';
import { engineOf } from '../../lib/core/derived-engine';

const prefix = `hyg-${randomUUID().slice(0, 8)}:`;
const LONG_TTL_MS = 60_000;
const kind = storeClientKind();
/** A plain ioredis connection for looking at Redis from outside. */
let redis: Redis;
/** The client the stores run on (ioredis, or node-redis in the `node-redis` projects). */
let client: RedisClient;
useStoreClients(prefix, (clients) => ({ redis, client } = clients));

test("a logout: the player's logins no longer list the session", async () => {
  const store = new RedisTokenStore({ redis: client, prefix });
  const record = sampleRecord(1, { openId: `hyg-${randomUUID()}` });
  const sessionKey = hashSessionId(newSessionKey());
  const { records } = engineOf(store);
  await records.put(sessionKey, record, { expectedVersion: null, ttlMs: LONG_TTL_MS });
  expect((await records.loginsOf(record.openId)).map((login) => login.sessionKey)).toEqual([
    sessionKey,
  ]);
  await records.delete(sessionKey, { logout: true });
  expect(await records.loginsOf(record.openId)).toEqual([]);
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

// Where a login's steps are separate calls (a Cluster; any store without the one-script login),
// a logoutPlayer() can list the player's logins between them: the login takes itself back.
test('a login whose record is written after logoutPlayer() listed the logins takes itself back', async () => {
  // The login's record write waits, through a gate on this client, until the log-out has run.
  const { gated, open } = gatedScript(PUT_IF_VERSION.sha);
  const loginStore = new RedisTokenStore({ redis: gated, prefix });
  const logoutStore = new RedisTokenStore({ redis: client, prefix });
  const record = sampleRecord(1, { openId: `hyg-${randomUUID()}` });
  const sessionId = newSessionKey();
  const loginGeneration = await engineOf(loginStore).records.loginGeneration();
  const login = engineOf(loginStore).records.put(hashSessionId(sessionId), record, {
    expectedVersion: null,
    ttlMs: LONG_TTL_MS,
    loginGeneration,
  });
  expect(await engineOf(logoutStore).records.deletePlayer(record.openId)).toBe(0);
  open();
  expect(await login).toBe(false);
  expect(await storedRecord(logoutStore, sessionId)).toBeUndefined();
  // A login after the log-out is kept.
  const later = newSessionKey();
  const records = engineOf(logoutStore).records;
  const since = await records.loginGeneration();
  expect(
    await records.put(hashSessionId(later), record, {
      expectedVersion: null,
      ttlMs: LONG_TTL_MS,
      loginGeneration: since,
    }),
  ).toBe(true);
  expect(await storedRecord(logoutStore, later)).toBeDefined();
});

testWhere(kind.library === 'ioredis')(
  'a new login in one script: a logoutPlayer() while it waits comes wholly before it',
  async () => {
    // The login's one command waits, through a gate on this client, until the log-out has run.
    const { gated, open } = gatedScript(PUT_NEW_LOGIN.sha);
    const loginStore = new RedisTokenStore({ redis: gated, prefix });
    const logoutStore = new RedisTokenStore({ redis: client, prefix });
    const record = sampleRecord(1, { openId: `hyg-${randomUUID()}` });
    const entering = newSessionKey();
    const engine = engineOf(loginStore);
    const write = {
      sessionKey: hashSessionId(entering),
      record,
      ttlMs: LONG_TTL_MS,
      loginGeneration: await engine.records.loginGeneration(),
      giveBack: undefined,
      session: undefined,
    };
    const entry = engine.logins!.put(write);
    expect(await engineOf(logoutStore).records.deletePlayer(record.openId)).toBe(0);
    open();
    expect(await entry).toBe(false);
    expect(await storedRecord(logoutStore, entering)).toBeUndefined();
    // The same login entering after the log-out (its generation read since) is kept.
    const since = await engine.records.loginGeneration();
    expect(await engine.logins!.put({ ...write, loginGeneration: since })).toBe(true);
    expect(await storedRecord(logoutStore, entering)).toEqual(record);
  },
);

test('with encryptionKeys, a record in the clear is refused: anyone who can write to Redis could plant one', async () => {
  const key = randomBytes(32);
  const store = new RedisTokenStore({ redis: client, prefix, encryptionKeys: [{ id: 'k1', key }] });
  const sessionId = newSessionKey();
  await redis.set(
    `${prefix}t:${hashSessionId(sessionId)}`,
    `1|${JSON.stringify(sampleRecord(1))}`,
    'PX',
    LONG_TTL_MS,
  );
  expect(await engineOf(store).records.get(hashSessionId(sessionId))).toEqual({
    status: 'unreadable',
    reason: 'decrypt',
  });
});

describe('NODE_ENV=production', () => {
  const saved = process.env.NODE_ENV;
  beforeEach(() => (process.env.NODE_ENV = 'production'));
  afterEach(() => (process.env.NODE_ENV = saved));

  test('refuses a RedisTokenStore without encryptionKeys, naming the fix and the opt-out, and leaves nothing on the client', async () => {
    const emitter = client as unknown as NodeJS.EventEmitter;
    const listeners = () => emitter.eventNames().map((name) => [name, emitter.listenerCount(name)]);
    const before = listeners();
    const create = () => new RedisTokenStore({ redis: client, prefix });
    expect(create).toThrow(/encryptionKeys.*openssl rand -base64 32.*allowPlaintextTokens: true/);
    // A setup refusal like every other made at creation, naming the option.
    expect(create).toThrow(
      expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'encryptionKeys' }),
    );
    expect(create).toThrow(SetupError);
    expect(listeners()).toEqual(before);
    const plain = new RedisTokenStore({ redis: client, prefix, allowPlaintextTokens: true });
    const key = randomBytes(32);
    const sealed = new RedisTokenStore({
      redis: client,
      prefix,
      encryptionKeys: [{ id: 'k1', key }],
    });
    await plain.close();
    await sealed.close();
    expect(listeners()).toEqual(before);
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

test('a wait for a replica that reaches its WAIT after close() opens no connection the store never closes', async () => {
  const link = redisCommands(client).replicaLink();
  if (typeof link === 'string') return;
  const markKey = `${prefix}closed-mark`;
  // As a round whose ROLE was under way when the store closed (a failover, say).
  link.close();
  await expect(link.confirm(0, markKey, 0, 100, 1000, () => true)).rejects.toThrow('closed');
  // A lane opened then would have written its mark on a connection of its own, left open.
  expect(await redis.exists(markKey)).toBe(0);
});
