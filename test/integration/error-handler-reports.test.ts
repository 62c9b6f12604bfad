// `login.errorHandler()` tells what it answers: a package error that reached it from a handler (a
// rejected `req.platformToken()`) or from express-session's store (Redis stalled under
// RedisSessionStore) is a `requestFailed` event, logged once per code as the token store's failures
// are; an error the package's own handlers already told is not told twice. On a real redis-server
// and the simulator over HTTP.
import express, { type Express } from 'express';
import session from 'express-session';
import request from 'supertest';
import { Redis } from 'ioredis';
import {
  MemoryTokenStore,
  platformLogin,
  RedisSessionStore,
  type PlatformLogger,
  type PlatformLoginOptions,
} from 'express-platform-login';
import type { RequestFailure } from '../../lib/observability/events';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { loginOptions, SESSION_SECRET, TEST_REDIRECT_URI } from '../helpers/test-app';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { sessionCookieFrom } from '../helpers/session-cookie';

let sim: PlatformSimulator;
let server: TestRedisServer;
let redis: Redis;
beforeAll(async () => {
  sim = await startSimulator();
  server = await startRedisServer();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
  await sim.close();
});

/** A logger keeping its warn and error lines. */
function recording() {
  const lines: Array<{ level: string; message: string }> = [];
  const keep =
    (level: string) =>
    (_fields: object, message: string): void =>
      void lines.push({ level, message });
  const logger: PlatformLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: keep('warn'),
    error: keep('error'),
  };
  return { logger, lines };
}

/** A game on RedisSessionStore, its routes behind the middleware, errors answered by errorHandler(). */
function game(extra: Partial<PlatformLoginOptions>, sessionTimeoutMs = 1500) {
  const login = platformLogin(loginOptions(sim, { store: new MemoryTokenStore(), ...extra }));
  const failures: RequestFailure[] = [];
  login.on('requestFailed', (failure) => failures.push(failure));
  const sessions = new RedisSessionStore({ redis, operationTimeoutMs: sessionTimeoutMs });
  const app: Express = express();
  app.use(
    session({ store: sessions, secret: SESSION_SECRET, resave: false, saveUninitialized: false }),
  );
  app.use('/platform/callback', login.callback);
  app.get('/api/me', login.middleware(), (req, res) => void res.json(req.platformUser));
  app.get('/visit', login.middleware({ optional: true }), async (req, res, next) => {
    try {
      res.json({ length: (await req.platformToken()).length });
    } catch (error) {
      next(error);
    }
  });
  app.use(login.errorHandler());
  return { app, failures, sessions };
}

test('a Redis stall under the session store: 503 store_unavailable, one error line naming it', async () => {
  // The login is made by one process; another, whose memory holds no session yet, serves it.
  const { app: first, sessions: firstSessions } = game({});
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
  const cookie = sessionCookieFrom(
    await request(first).get(`/platform/callback?code=${code}`).expect(303),
  );
  await request(first).get('/api/me').set('Cookie', cookie).expect(200);
  const { logger, lines } = recording();
  const { app: second, failures, sessions } = game({ logger }, 200);
  server.pause();
  try {
    for (let i = 0; i < 3; i += 1) {
      const res = await request(second)
        .get('/api/me')
        .set('Cookie', cookie)
        .set('Accept', 'application/json');
      expect([res.status, res.body]).toEqual([503, { error: 'store_unavailable' }]);
    }
  } finally {
    server.resume();
  }
  expect(failures.map((failure) => [failure.part, failure.code])).toEqual(
    Array.from({ length: 3 }, () => ['session-store', 'ERR_PLATFORM_STORE_UNAVAILABLE']),
  );
  expect(lines).toEqual([
    {
      level: 'error',
      message: expect.stringMatching(/503 \(ERR_PLATFORM_STORE_UNAVAILABLE\): The session store/),
    },
  ]);
  await Promise.all([firstSessions.close(), sessions.close()]);
});

test("a handler's rejected req.platformToken() answered by errorHandler() is told once", async () => {
  const { app, failures, sessions } = game({});
  await request(app).get('/visit').set('Accept', 'application/json').expect(401);
  expect(failures.map((failure) => [failure.part, failure.code, failure.status])).toEqual([
    ['request', 'ERR_PLATFORM_LOGIN_REQUIRED', 401],
  ]);
  await sessions.close();
});

test('with handleErrors: false, a refusal the middleware told is not told again by errorHandler()', async () => {
  const { app, failures, sessions } = game({ handleErrors: false });
  await request(app).get('/api/me').set('Accept', 'application/json').expect(401);
  expect(failures.map((failure) => failure.code)).toEqual(['ERR_PLATFORM_LOGIN_REQUIRED']);
  await sessions.close();
});
