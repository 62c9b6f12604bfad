// Start-up checks against real processes: Redis's eviction policy read with CONFIG GET on a real
// redis-server, the checks the callback runs on an entry, and platform URLs in production.
import express, { type Express } from 'express';
import session, { MemoryStore, type SessionOptions } from 'express-session';
import request from 'supertest';
import { Redis } from 'ioredis';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { platformLogin } from 'express-platform-login';
import { checkSetup } from '../../lib/setup/setup-checks';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { loginOptions, TEST_REDIRECT_URI } from '../helpers/test-app';
import { useSimulator } from '../helpers/bed';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';

const SOUND_SESSION = {
  secret: 'pW3x9Vq7LmZ2cR8tY6bN4jK1hG5fD0sA',
  resave: false,
  saveUninitialized: false,
};
// A command of the test's own is not what is tested: room for a loaded machine.
const REDIS_OPTIONS = { maxRetriesPerRequest: 1, commandTimeout: 1000 + LOAD_ALLOWANCE_MS };

let sim: PlatformSimulator;
useSimulator((started) => (sim = started));

describe('Redis maxmemory-policy (CONFIG GET through the ioredis client)', () => {
  let server: TestRedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedisServer(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
    redis = new Redis(server.url, REDIS_OPTIONS);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  async function problemsWith(policy: string, maxmemory = '64mb') {
    await redis.config('SET', 'maxmemory-policy', policy);
    await redis.config('SET', 'maxmemory', maxmemory);
    const warnings: string[] = [];
    const problems = await checkSetup({ redis, warn: (message) => warnings.push(message) });
    return { problems, warnings };
  }

  test.each(['allkeys-lru', 'allkeys-random', 'volatile-lru', 'volatile-ttl'])(
    '%s with maxmemory set is a warning naming noeviction',
    async (policy) => {
      const { problems, warnings } = await problemsWith(policy);
      expect(problems.map((p) => [p.check, p.severity])).toEqual([
        ['redis-evicts-keys', 'warning'],
      ]);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`maxmemory-policy ${policy}`);
      expect(warnings[0]).toContain('Set `maxmemory-policy noeviction`');
    },
  );

  test('noeviction, or no maxmemory (nothing is ever evicted), is fine', async () => {
    expect((await problemsWith('noeviction')).problems).toEqual([]);
    expect((await problemsWith('allkeys-lru', '0')).problems).toEqual([]);
  });

  test('the shared test Redis (defaults) is fine', async () => {
    const shared = new Redis(process.env.REDIS_URL!, REDIS_OPTIONS);
    try {
      await expect(checkSetup({ redis: shared, session: SOUND_SESSION })).resolves.toEqual([]);
    } finally {
      shared.disconnect();
    }
  });

  test('a stalled Redis does not hang the start: no finding within 2.5 s', async () => {
    // No commandTimeout (ioredis's default): only the check's own deadline can end the wait.
    const stalled = new Redis(server.url, { maxRetriesPerRequest: 1 });
    await stalled.ping();
    server.pause();
    try {
      const startedAt = Date.now();
      await expect(checkSetup({ redis: stalled })).resolves.toEqual([]);
      expect(Date.now() - startedAt).toBeLessThan(2500 + LOAD_ALLOWANCE_MS);
    } finally {
      server.resume();
      stalled.disconnect();
    }
  });
});

test('a Redis with CONFIG disabled (managed services) is skipped without a finding', async () => {
  const server = await startRedisServer(['--rename-command', 'CONFIG', '']);
  const redis = new Redis(server.url, REDIS_OPTIONS);
  try {
    await expect(checkSetup({ redis })).resolves.toEqual([]);
  } finally {
    redis.disconnect();
    await server.stop();
  }
});

describe('checks on an entry, before the code is claimed', () => {
  /** The game's entry: express-session set up as given, then the package's callback. */
  function callbackApp(sessionOptions: SessionOptions, trustProxy?: string): Express {
    // The default logger: these warnings must reach the console with no logger given.
    const login = platformLogin(loginOptions(sim, { logger: undefined }));
    const app = express();
    if (trustProxy !== undefined) app.set('trust proxy', trustProxy);
    app.use(session(sessionOptions));
    app.use('/platform/callback', login.callback);
    return app;
  }

  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  test('connect-redis 9+ holding an ioredis client: 500 server_misconfigured, no platform call, one loud warning', async () => {
    const client = new Redis({ lazyConnect: true });
    /** The shape of connect-redis 9.0.0's store, which keeps the client as given. */
    class ConnectRedis9Shape extends MemoryStore {
      prefix = 'sess:';
      serializer = JSON;
      client = client;
    }
    try {
      const app = callbackApp({ ...SOUND_SESSION, store: new ConnectRedis9Shape() });
      // Every spelling the router matches runs the check (Express 5 also matches `//`).
      const spellings = [
        '/platform/callback',
        '/platform/callback/',
        '/platform/callback//',
        '/PLATFORM/CALLBACK',
      ];
      for (const path of spellings) {
        const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
        const res = await request(app)
          .get(`${path}?code=${code}`)
          .set('Accept', 'application/json');
        expect({ path, status: res.status, body: res.body }).toEqual({
          path,
          status: 500,
          body: { error: 'server_misconfigured' },
        });
      }
      expect(sim.calls.authorization_code).toBe(0);
      const loud = warn.mock.calls.filter(([m]) => String(m).includes('connect-redis@~8.1'));
      expect(loud).toHaveLength(1);
    } finally {
      client.disconnect();
    }
  });

  test('a Secure cookie behind a proxy without trust proxy: one warning naming the fix', async () => {
    const app = callbackApp({ ...SOUND_SESSION, cookie: { secure: true } }); // no trust proxy
    for (let i = 0; i < 2; i += 1) {
      const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
      const res = await request(app)
        .get(`/platform/callback?code=${code}`)
        .set('X-Forwarded-Proto', 'https');
      // What the warning is about: the entry goes through, and the cookie never reaches the browser.
      expect(res.status).toBe(303);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    const loud = warn.mock.calls.filter(([m]) => String(m).includes("app.set('trust proxy', 1)"));
    expect(loud).toHaveLength(1);
  });

  test('a Secure cookie on an entry over plain http: one warning saying the browser got no cookie', async () => {
    const app = callbackApp({ ...SOUND_SESSION, cookie: { secure: true } });
    for (let i = 0; i < 2; i += 1) {
      const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
      const res = await request(app).get(`/platform/callback?code=${code}`);
      expect(res.status).toBe(303);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    const loud = warn.mock.calls.filter(([m]) => String(m).includes('arrived over plain http'));
    expect(loud).toHaveLength(1);
    expect(String(loud[0]![0])).toMatch(
      /^\[express-platform-login\] An entry arrived over plain http/,
    );
  });

  test('the same app with trust proxy set: the cookie is sent and nothing is warned', async () => {
    const app = callbackApp({ ...SOUND_SESSION, cookie: { secure: true } }, 'loopback');
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    const res = await request(app)
      .get(`/platform/callback?code=${code}`)
      .set('X-Forwarded-Proto', 'https');
    expect(res.status).toBe(303);
    expect(String(res.headers['set-cookie'])).toMatch(/^connect\.sid=.*; Secure/);
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('the session cookie on an entry, in production', () => {
  const nodeEnv = process.env.NODE_ENV;
  let warn: jest.SpyInstance;
  beforeEach(() => {
    process.env.NODE_ENV = 'production';
    warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => {
    process.env.NODE_ENV = nodeEnv;
    warn.mockRestore();
  });

  /** A game that never called checkSetup: express-session as given, then the callback. */
  function callbackApp(sessionOptions: SessionOptions): Express {
    const login = platformLogin(loginOptions(sim, { logger: undefined }));
    const app = express();
    app.set('trust proxy', 'loopback');
    app.use(session(sessionOptions));
    app.use('/platform/callback', login.callback);
    return app;
  }
  const enterThroughProxy = (app: Express) =>
    request(app)
      .get(`/platform/callback?code=${sim.issueCode({ redirectUri: TEST_REDIRECT_URI })}`)
      .set('X-Forwarded-Proto', 'https');
  const cookieWarnings = () =>
    warn.mock.calls.filter(([m]) => String(m).includes('the session cookie'));

  test("express-session's default cookie (`Path=/; HttpOnly`): warned once, naming the fix", async () => {
    const app = callbackApp(SOUND_SESSION);
    for (let i = 0; i < 2; i += 1) {
      const res = await enterThroughProxy(app);
      expect(res.status).toBe(303);
      expect(String(res.headers['set-cookie'])).toMatch(/^connect\.sid=[^;]+; Path=\/; HttpOnly$/);
    }
    expect(cookieWarnings()).toHaveLength(1);
    expect(String(cookieWarnings()[0]![0])).toContain(
      'has no Secure and no SameSite: a plain-http request to the game sends it in the clear.',
    );
  });

  test("`secure: 'auto'` where the entry came over plain http: named as this entry sends it", async () => {
    const app = callbackApp({ ...SOUND_SESSION, cookie: { secure: 'auto', sameSite: 'lax' } });
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    expect((await request(app).get(`/platform/callback?code=${code}`)).status).toBe(303);
    expect(cookieWarnings()).toHaveLength(1);
    expect(String(cookieWarnings()[0]![0])).toContain('has no Secure:');
  });

  test('Secure and SameSite set: the cookie says so and nothing is warned', async () => {
    const app = callbackApp({ ...SOUND_SESSION, cookie: { secure: true, sameSite: 'lax' } });
    const res = await enterThroughProxy(app);
    expect(res.status).toBe(303);
    expect(String(res.headers['set-cookie'])).toMatch(/; Secure; SameSite=Lax$/);
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('platform URLs in production', () => {
  const nodeEnv = process.env.NODE_ENV;
  beforeEach(() => {
    process.env.NODE_ENV = 'production';
  });
  afterEach(() => {
    process.env.NODE_ENV = nodeEnv;
  });

  test('platformLogin() refuses an http:// authUrl that is not loopback, naming authUrl', () => {
    expect(() =>
      platformLogin({ ...loginOptions(sim), authUrl: 'http://auth.platform.example' }),
    ).toThrow(/^platformLogin\(\): `authUrl` must be an https:\/\/ URL in production/);
  });

  test('the simulator on loopback is still allowed', () => {
    expect(() => platformLogin(loginOptions(sim))).not.toThrow();
  });
});
