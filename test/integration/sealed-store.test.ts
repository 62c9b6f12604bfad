// A studio's own store, written exactly as docs/stores.md's "smallest correct store", over a real
// login through the simulator: with platformLogin()'s `encryptionKeys` what it holds carries no
// token and no open_id, a record it held in the clear before still reads and is sealed at its next
// write, a sealed value copied under another session's key does not open, and production refuses
// such a store without keys.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import session from 'express-session';
import { Redis } from 'ioredis';
import {
  MemoryTokenStore,
  platformLogin,
  RedisTokenStore,
  SetupError,
  type TokenStore,
} from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { hashSessionId } from '../../lib/core/hash';
import { docsSqlStore, newTable, storedValues, type Table } from '../helpers/docs-sql-store';
import { expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { sessionCookieFrom, sessionIdFrom } from '../helpers/session-cookie';
import { createTestApp, loginOptions, TEST_REDIRECT_URI } from '../helpers/test-app';

const newKeys = () => [{ id: 'k1', key: randomBytes(32).toString('base64') }];
const keys = newKeys();

let sim: PlatformSimulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

/** The game on `store`, its sessions in `sessions` (shared by apps that stand for one game). */
function game(store: TokenStore, sessions: session.Store, encryptionKeys = keys) {
  return createTestApp({
    sim,
    sessionStore: sessions,
    login: { store, ...(encryptionKeys.length > 0 ? { encryptionKeys } : {}) },
  }).app;
}

/** Enters as `openId`; resolves the session's cookie and id. */
async function enter(app: ReturnType<typeof game>, openId = 'player-ada') {
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId });
  const res = await request(app).get(`/platform/callback?code=${encodeURIComponent(code)}`);
  expect(res.status).toBe(303);
  return { cookie: sessionCookieFrom(res), sessionId: sessionIdFrom(res) };
}

/** What the store holds that a reader of the table would see: every value with a secret in it. */
/** GET /api/token as `cookie`, its token due: answered 200 after one refresh at the platform. */
async function refreshedOnce(app: ReturnType<typeof game>, cookie: string) {
  sim.resetCalls();
  const refreshed = await request(app).get('/api/token').set('Cookie', cookie);
  expect(refreshed.status).toBe(200);
  expect(sim.calls.refresh_token).toBe(1);
  return refreshed;
}

const leaking = (table: Table, secrets: string[]): string[] =>
  storedValues(table).filter((value) => secrets.some((secret) => value.includes(secret)));

test('with encryptionKeys the store holds no token and no open_id; the login works and refreshes', async () => {
  const table = newTable();
  const store = docsSqlStore(table);
  const app = game(store, new session.MemoryStore());
  const { cookie, sessionId } = await enter(app);

  const first = await request(app).get('/api/token').set('Cookie', cookie);
  expect(first.status).toBe(200);
  const me = await request(app).get('/api/me').set('Cookie', cookie);
  expect(me.body.openId).toBe('player-ada');
  const record = (await storedRecord(store, sessionId))!;
  expect(record.accessToken).toBe(first.body.accessToken);
  expect(storedValues(table).length).toBeGreaterThan(0);
  expect(leaking(table, [record.accessToken, record.refreshToken, 'player-ada'])).toEqual([]);

  // A refresh writes the record again: sealed too.
  const due = await rewriteRecord(store, sessionId, expiringIn(-1000));
  const refreshed = await refreshedOnce(app, cookie);
  const after = (await storedRecord(store, sessionId))!;
  expect(after.version).toBe(due.version + 1);
  expect(after.accessToken).toBe(refreshed.body.accessToken);
  expect(leaking(table, [after.accessToken, after.refreshToken, 'player-ada'])).toEqual([]);
});

test('a record the store held in the clear before keys were given still reads, and is sealed at its next write', async () => {
  const table = newTable();
  const sessions = new session.MemoryStore();
  // Yesterday's deployment: no keys (a warning), records as JSON.
  const before = docsSqlStore(table);
  const { cookie, sessionId } = await enter(game(before, sessions, []));
  const plain = (await storedRecord(before, sessionId))!;
  expect(leaking(table, [plain.refreshToken])).toHaveLength(1);

  // Today's, with keys, over the same table: the player is still logged in.
  const today = docsSqlStore(table);
  const app = game(today, sessions);
  const read = await request(app).get('/api/token').set('Cookie', cookie);
  expect(read.status).toBe(200);
  expect(read.body.accessToken).toBe(plain.accessToken);

  // The next write (a refresh, the token having expired) seals it.
  const due = await rewriteRecord(before, sessionId, expiringIn(-1000));
  expect(leaking(table, [plain.refreshToken])).toHaveLength(1);
  await refreshedOnce(app, cookie);
  const sealed = (await storedRecord(today, sessionId))!;
  expect(sealed.version).toBe(due.version + 1);
  expect(
    leaking(table, [sealed.accessToken, sealed.refreshToken, plain.refreshToken, 'player-ada']),
  ).toEqual([]);
});

test("a sealed value copied under another session's key does not open there", async () => {
  const table = newTable();
  const app = game(docsSqlStore(table), new session.MemoryStore());
  const ada = await enter(app, 'player-ada');
  const bo = await enter(app, 'player-bo');
  const adaToken = (await request(app).get('/api/token').set('Cookie', ada.cookie)).body
    .accessToken as string;

  const key = (sessionId: string) => `t:${hashSessionId(sessionId)}`;
  table
    .prepare('update kv set value = (select value from kv where key = ?) where key = ?')
    .run(key(ada.sessionId), key(bo.sessionId));

  const asBo = await request(app).get('/api/token').set('Cookie', bo.cookie);
  expect(asBo.status).toBe(401);
  expect(asBo.text).not.toContain(adaToken);
  const asAda = await request(app).get('/api/token').set('Cookie', ada.cookie);
  expect(asAda.status).toBe(200);
  expect(asAda.body.accessToken).toBe(adaToken);
});

test('a store of your own without keys is a start-up warning outside production', () => {
  const warnings: string[] = [];
  const logger = {
    debug() {},
    info() {},
    error() {},
    warn: (_: object, m: string) => warnings.push(m),
  };
  platformLogin(loginOptions(sim, { store: docsSqlStore(newTable()), logger }));
  expect(warnings).toEqual([expect.stringMatching(/in the clear.*`encryptionKeys/)]);

  warnings.length = 0;
  platformLogin(
    loginOptions(sim, { store: docsSqlStore(newTable()), logger, encryptionKeys: keys }),
  );
  platformLogin(loginOptions(sim, { store: new MemoryTokenStore(), logger }));
  expect(warnings).toEqual([]);
});

describe('NODE_ENV=production', () => {
  const nodeEnv = process.env.NODE_ENV;
  beforeEach(() => (process.env.NODE_ENV = 'production'));
  afterEach(() => (process.env.NODE_ENV = nodeEnv));

  test('refuses a store of your own without encryptionKeys, at creation', () => {
    const create = () => platformLogin(loginOptions(sim, { store: docsSqlStore(newTable()) }));
    expect(create).toThrow(SetupError);
    expect(create).toThrow(
      expect.objectContaining({
        code: 'ERR_PLATFORM_INVALID_OPTION',
        option: 'encryptionKeys',
        message: expect.stringMatching(/in the clear.*NODE_ENV=production/),
      }),
    );
  });

  test('accepts it with keys, and a MemoryTokenStore without', () => {
    const store = docsSqlStore(newTable());
    expect(() => platformLogin(loginOptions(sim, { store, encryptionKeys: keys }))).not.toThrow();
    expect(() => platformLogin(loginOptions(sim, { store: new MemoryTokenStore() }))).not.toThrow();
  });
});

describe('beside RedisTokenStore, which seals with its own keys', () => {
  const redis = new Redis(process.env.REDIS_URL!, { lazyConnect: true });
  afterAll(() => redis.disconnect());
  const redisStore = (encryptionKeys?: typeof keys) =>
    new RedisTokenStore({ redis, recordCache: false, durability: false, encryptionKeys });
  const create = (store: TokenStore, encryptionKeys?: typeof keys) => () =>
    platformLogin(loginOptions(sim, { store, ...(encryptionKeys ? { encryptionKeys } : {}) }));

  test('the same keys given to both are accepted', () => {
    expect(create(redisStore(keys), keys)).not.toThrow();
    expect(create(redisStore(keys))).not.toThrow();
  });

  test('other keys than its own are refused, naming where the keys go', () => {
    expect(create(redisStore(keys), newKeys())).toThrow(
      expect.objectContaining({
        option: 'encryptionKeys',
        message: expect.stringMatching(/differs from the RedisTokenStore's own.*one place/),
      }),
    );
  });

  test('keys given to platformLogin() only, with a RedisTokenStore without its own, are refused', () => {
    expect(create(redisStore(), keys)).toThrow(
      expect.objectContaining({
        option: 'encryptionKeys',
        message: expect.stringMatching(/does not reach a RedisTokenStore.*new RedisTokenStore/),
      }),
    );
  });
});
