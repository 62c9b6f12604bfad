// Mistakes the package sees say themselves on the app's logger (or the console) without `DEBUG`:
// a wrong authUrl, a platformOrigins mismatch, a redirect_uri the platform refused, a callback
// mounted away from redirectUri's path, and a Redis that is not there. Each line names the fix and never a code or a secret.
import { once } from 'node:events';
import express from 'express';
import session from 'express-session';
import request from 'supertest';
import { Redis } from 'ioredis';
import createDebug from 'debug';
import { platformLogin, reportRedisErrors } from 'express-platform-login';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import {
  createTestApp,
  entryApp,
  loginOptions,
  SESSION_SECRET,
  TEST_REDIRECT_URI,
} from '../helpers/test-app';
import { freePort } from '../helpers/free-port';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { waitUntil } from '../helpers/wait-until';
import { useSimulator } from '../helpers/bed';
import { recordingLogger } from '../helpers/recording-logger';

let sim: PlatformSimulator;
useSimulator((started) => (sim = started));

const code = (redirectUri = TEST_REDIRECT_URI): string => sim.issueCode({ redirectUri });

describe('entries that fail on the setup', () => {
  test('authUrl given as the token endpoint itself: 502 platform_error, and an error line naming the URL asked and authUrl', async () => {
    const { logger, seen } = recordingLogger();
    const { app } = createTestApp({ sim, login: { logger, authUrl: `${sim.url}/token` } });
    const entry = code();
    const res = await request(app).get(`/platform/callback?code=${entry}`).expect(502);
    expect(res.body).toEqual({ error: 'platform_error' });
    expect(seen()).toEqual([
      {
        level: 'error',
        fields: expect.objectContaining({ code: 'ERR_PLATFORM_REFUSED', status: 502 }),
        message: expect.stringContaining(
          `(HTTP 404). Check authUrl (e.g. PLATFORM_AUTH_URL): the token endpoint asked, ${sim.url}/token/token, is authUrl followed by /token.`,
        ),
      },
    ]);
    expect(JSON.stringify(seen())).not.toContain(entry);
  });

  test('the same failure again within the interval is not written twice at error', async () => {
    const { logger, seen, lines } = recordingLogger();
    const { app } = createTestApp({ sim, login: { logger, authUrl: `${sim.url}/wrong` } });
    for (let i = 0; i < 3; i += 1) {
      await request(app).get(`/platform/callback?code=${code()}`).expect(502);
    }
    expect(seen()).toHaveLength(1);
    // The rest are still there for DEBUG.
    expect(lines.filter((line) => line.fields.code === 'ERR_PLATFORM_REFUSED')).toHaveLength(3);
  });

  test('without a logger option the error reaches console.error, DEBUG unset', async () => {
    createDebug.disable();
    const written: string[] = [];
    const spy = jest
      .spyOn(console, 'error')
      .mockImplementation((line: unknown) => void written.push(String(line)));
    try {
      const login = platformLogin({
        ...loginOptions(sim),
        authUrl: `${sim.url}/wrong`,
        logger: undefined, // the default
      });
      const app = entryApp(login);
      await request(app).get(`/platform/callback?code=${code()}`).expect(502);
      expect(written).toEqual([
        expect.stringMatching(/^\[express-platform-login\] .*Check authUrl/),
      ]);
    } finally {
      spy.mockRestore();
    }
  });

  test('platformOrigins that are not the platform: 403 entry_context_refused, and a warning naming platformOrigins', async () => {
    const { logger, seen } = recordingLogger();
    const { app } = createTestApp({
      sim,
      login: { logger, platformOrigins: ['https://not-the-platform.example'] },
    });
    await request(app)
      .get(`/platform/callback?code=${code()}`)
      .set({
        'Sec-Fetch-Site': 'cross-site',
        'Sec-Fetch-Mode': 'navigate',
        'Sec-Fetch-Dest': 'document',
        Referer: `${sim.url}/`,
      })
      .expect(403, { error: 'entry_context_refused' });
    expect(seen()).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('Check `platformOrigins`'),
      }),
    ]);
  });

  test('a redirect_uri the platform refused: the platform says so in the log, not "expired or already used"', async () => {
    const { logger, seen } = recordingLogger();
    const { app } = createTestApp({ sim, login: { logger } });
    // The platform sent the player to another address than the game says it is at.
    const entry = code('http://127.0.0.1:3999/auth/callback');
    const res = await request(app).get(`/platform/callback?code=${entry}`).expect(400);
    // The player's answer stays the documented code; the platform's words go to the log only.
    expect(res.body).toEqual({ error: 'code_rejected' });
    expect(seen()).toEqual([
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ code: 'ERR_PLATFORM_CODE_REJECTED' }),
        message: expect.stringContaining(
          'redirect_uri does not match the one the authorization code was issued for',
        ),
      }),
    ]);
    expect(seen()[0]!.message).not.toContain('expired or already used');
    expect(JSON.stringify(seen())).not.toContain(entry);
  });

  test('a code the platform no longer knows stays a player matter, at debug', async () => {
    const { logger, seen, lines } = recordingLogger();
    const { app } = createTestApp({ sim, login: { logger } });
    await request(app).get('/platform/callback?code=never-issued-code').expect(400);
    expect(seen()).toEqual([]);
    expect(
      lines.some((line) => String(line.fields.message).includes('authorization code is unknown')),
    ).toBe(true);
  });
});

describe('a callback mounted away from redirectUri', () => {
  function misMounted() {
    const { logger, seen } = recordingLogger();
    const login = platformLogin({ ...loginOptions(sim), logger });
    const app = express();
    app.use(session({ secret: SESSION_SECRET, resave: false, saveUninitialized: false }));
    app.use('/auth/callback', login.callback);
    app.use(login.middleware());
    app.get('/api/me', (req, res) => void res.json(req.platformUser));
    return { app, seen };
  }
  const BOTH =
    /login\.callback is mounted at \/auth\/callback, but redirectUri's path is \/platform\/callback/;

  test("the platform's request for redirectUri's path, reaching the middleware past no callback, warns once", async () => {
    const { app, seen } = misMounted();
    await request(app).get('/platform/callback?code=x').expect(401);
    await request(app).get('/platform/callback?code=y').expect(401);
    expect(seen()).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(
          /reached login\.middleware\(\) without passing login\.callback/,
        ),
      }),
    ]);
  });

  test('the first request the callback sees warns too', async () => {
    const { app, seen } = misMounted();
    await request(app).get('/auth/callback').expect(400);
    expect(seen().filter((line) => BOTH.test(line.message))).toHaveLength(1);
  });

  test('routed with app.get at its path: the first entry, a 404, says to mount it with app.use', async () => {
    const { logger, seen } = recordingLogger();
    const login = platformLogin({ ...loginOptions(sim), logger });
    const app = express();
    app.use(session({ secret: SESSION_SECRET, resave: false, saveUninitialized: false }));
    app.get('/platform/callback', login.callback);
    await request(app).get(`/platform/callback?code=${code()}`).expect(404);
    await request(app).get(`/platform/callback?code=${code()}`).expect(404);
    expect(seen().map((line) => line.message)).toEqual([
      expect.stringContaining(
        "login.callback is routed with app.get('/platform/callback', …) (or another route method)",
      ),
    ]);
    expect(seen()[0]!.message).toContain(
      "Mount it with app.use('/platform/callback', login.callback).",
    );
  });

  test('mounted at its path, nothing is said', async () => {
    const { logger, seen } = recordingLogger();
    const { app } = createTestApp({ sim, login: { logger } });
    await request(app).get('/api/me').expect(401);
    await request(app).get(`/platform/callback?code=${code()}`).expect(303);
    expect(seen()).toEqual([]);
  });
});

test('a Redis that is not there: one line naming the URL (no password) and redis-server, then one when it answers', async () => {
  const { logger, seen, lines } = recordingLogger();
  const port = await freePort();
  const url = `redis://:a-redis-password@127.0.0.1:${port}`;
  const redis = new Redis(url, { retryStrategy: () => 50, maxRetriesPerRequest: 1 });
  reportRedisErrors(redis, { logger, url });
  let server: TestRedisServer | undefined;
  try {
    await waitUntil(
      () => lines.filter((line) => line.fields.event === 'redisError').length >= 5,
      'five connection errors',
    );
    expect(seen()).toEqual([
      {
        level: 'error',
        fields: expect.objectContaining({
          code: 'ECONNREFUSED',
          redis: `redis://127.0.0.1:${port}`,
        }),
        message: expect.stringContaining(
          `is redis-server running? REDIS_URL=redis://127.0.0.1:${port}`,
        ),
      },
    ]);
    server = await startRedisServer(['--requirepass', 'a-redis-password'], { port });
    await waitUntil(
      () => lines.some((line) => line.fields.event === 'redisReady'),
      'the line saying Redis answers again',
    );
  } finally {
    // Once: a second disconnect() arms ioredis's 2 s stream timer on a connection already closed,
    // and that timer kept Jest's worker from exiting.
    const ended = redis.status === 'ready' ? once(redis, 'end') : undefined;
    redis.disconnect();
    await ended;
    await server?.stop();
  }
  expect(JSON.stringify(lines)).not.toContain('a-redis-password');
});
