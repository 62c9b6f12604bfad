// RedisTokenStore's `sessions` option: where a session store of the app's own (connect-redis) keeps
// sessions on the token store's client, given explicitly (no field of connect-redis is read). A new
// login then waits for a replica to hold its session as well as its record. On a real primary with
// a replica, connect-redis 8.1 on the same ioredis client.
import express from 'express';
import session from 'express-session';
import request from 'supertest';
import { Redis } from 'ioredis';
import { RedisStore as ConnectRedis8 } from 'connect-redis8';
import { platformLogin, RedisTokenStore } from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { loginOptions, SESSION_SECRET, TEST_REDIRECT_URI } from '../helpers/test-app';
import type { TestRedisServer } from '../helpers/redis-server';
import { startPrimaryAndReplica } from '../helpers/redis-replica';

let sim: PlatformSimulator;
let primary: TestRedisServer;
let replica: TestRedisServer;
let client: Redis;
let onReplica: Redis;
beforeAll(async () => {
  [sim, { primary, replica }] = await Promise.all([startSimulator(), startPrimaryAndReplica()]);
  [client, onReplica] = [new Redis(primary.url), new Redis(replica.url)];
});
afterAll(async () => {
  client.disconnect();
  onReplica.disconnect();
  await Promise.all([replica.stop(), primary.stop()]);
  await sim.close();
});

/** A game whose sessions connect-redis keeps at `sessionPrefix`; the token store told `told`. */
function game(sessionPrefix: string, told: { prefix?: string } | undefined) {
  const store = new RedisTokenStore({
    redis: client,
    prefix: 'sp:',
    allowPlaintextTokens: true,
    ...(told && { sessions: { client, ...told } }),
  });
  const login = platformLogin(loginOptions(sim, { store }));
  const app = express();
  app.use(
    session({
      store: new ConnectRedis8({ client, prefix: sessionPrefix }),
      secret: SESSION_SECRET,
      resave: false,
      saveUninitialized: false,
    }),
  );
  app.use('/platform/callback', login.callback);
  app.use(login.errorHandler());
  return { app, store };
}

const entry = (app: express.Express) =>
  request(app)
    .get(`/platform/callback?code=${sim.issueCode({ redirectUri: TEST_REDIRECT_URI })}`)
    .set('Accept', 'application/json');

test("connect-redis's default prefix is the option's default: the entry lands, its session on the replica", async () => {
  const { app, store } = game('sess:', {});
  const res = await entry(app);
  expect(res.status).toBe(303);
  const sid = decodeURIComponent(
    /connect\.sid=s%3A([^.;]+)/.exec(res.headers['set-cookie']![0]!)![1]!,
  );
  expect(await onReplica.exists(`sess:${sid}`)).toBe(1);
  await store.close();
});

test('the prefix the option names is where the login looks for its session: another one is a 503', async () => {
  // The option says `sess:`, connect-redis writes `other:`: the wait finds no session there.
  const { app, store } = game('other:', { prefix: 'sess:' });
  const res = await entry(app);
  expect([res.status, res.body]).toEqual([503, { error: 'store_unavailable' }]);
  await store.close();
});

test('without the option nothing of connect-redis is looked at: the record alone is waited for', async () => {
  const { app, store } = game('other:', undefined);
  expect((await entry(app)).status).toBe(303);
  await store.close();
});

test("`sessions.client` must be the store's own client", () => {
  const other = new Redis({ lazyConnect: true });
  expect(() => new RedisTokenStore({ redis: client, sessions: { client: other } })).toThrow(
    expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'sessions.client' }),
  );
  other.disconnect();
});

test("`durability`'s numbers are refused naming their unit and range", () => {
  const create = () =>
    new RedisTokenStore({
      redis: client,
      durability: { timeoutMs: 0 },
      allowPlaintextTokens: true,
    });
  expect(create).toThrow(
    '`durability.timeoutMs` must be an integer number of milliseconds from 1 to 60000',
  );
});
