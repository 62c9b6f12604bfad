// Start-up checks without a network: platform URLs, the express-session options, trust proxy and
// connect-redis given ioredis (clients created with lazyConnect never open a socket).
import express from 'express';
import { MemoryStore, type SessionOptions } from 'express-session';
import { RedisStore } from 'connect-redis8';
import { Redis } from 'ioredis';
import {
  checkSetup,
  isConnectRedisWithIoredis,
  type SetupProblem,
} from '../../lib/setup/setup-checks';
import { creationIssues, isLoopbackHost } from '../../lib/setup/creation-checks';
import { SetupError } from '../../lib/errors';

const STRONG = 'pW3x9Vq7LmZ2cR8tY6bN4jK1hG5fD0sA';
/** The URL checks of creationIssues() (the entry context set, so only the URLs are judged). */
const urlIssues = (
  authUrl: string,
  extra: { apiUrl?: string; redirectUri?: string } = {},
  production = true,
) =>
  creationIssues(
    {
      authUrl,
      redirectUri: extra.redirectUri ?? 'https://game.example/platform/callback',
      api: { url: extra.apiUrl },
      entry: { context: { mode: 'report' } },
    },
    production,
  );

describe('the platform URLs (creationIssues, run by the options schema at creation)', () => {
  test.each([
    ['authUrl', urlIssues('http://auth.platform.example')],
    [
      'api.url',
      urlIssues('https://auth.platform.example', { apiUrl: 'http://api.platform.example' }),
    ],
    [
      'redirectUri',
      urlIssues('https://auth.platform.example', { redirectUri: 'http://game.example/cb' }),
    ],
  ])('refuses an http:// %s in production, naming it', (name, issues) => {
    expect(issues).toEqual([
      { path: name.split('.'), message: expect.stringMatching(/^must be an https:\/\//) },
    ]);
  });

  test.each([
    'http://127.0.0.1:4000',
    'http://127.8.9.10',
    'http://localhost:4000',
    'http://[::1]:4000',
    'http://sim.localhost',
  ])('allows loopback %s in production', (authUrl) => {
    expect(urlIssues(authUrl)).toEqual([]);
  });

  test('allows http:// outside production and https:// everywhere', () => {
    expect(urlIssues('http://auth.platform.example', {}, false)).toEqual([]);
    expect(urlIssues('https://auth.platform.example')).toEqual([]);
  });

  test('loopback means loopback only', () => {
    for (const host of [
      '127.0.0.1.nip.io',
      'localhost.example',
      '10.0.0.1',
      '0.0.0.0',
      '::ffff:1',
    ]) {
      expect(isLoopbackHost(host)).toBe(false);
    }
  });
});

/** checkSetup with a recording warn function; resolves the problems and the warnings. */
async function run(
  session: SessionOptions,
  extra: Omit<Parameters<typeof checkSetup>[0], 'session' | 'warn'> = {},
): Promise<{ problems: SetupProblem[]; warnings: string[] }> {
  const warnings: string[] = [];
  const problems = await checkSetup({
    session,
    production: false,
    ...extra,
    warn: (message) => warnings.push(message),
  });
  return { problems, warnings };
}

const sound: SessionOptions = { secret: STRONG, resave: false, saveUninitialized: false };

describe('checkSetup: express-session secret', () => {
  test('a sound setup has no problem and warns nothing', async () => {
    await expect(run(sound)).resolves.toEqual({ problems: [], warnings: [] });
  });

  test.each([
    ['short', 'keyboard cat'],
    ['repetitive', 'ab'.repeat(20)],
  ])(
    'a %s secret is refused in production, naming the fix but not the secret',
    async (_n, secret) => {
      const error: unknown = await run({ ...sound, secret }, { production: true }).catch((e) => e);
      expect(error).toBeInstanceOf(SetupError);
      expect((error as SetupError).code).toBe('ERR_PLATFORM_SETUP');
      expect((error as SetupError).message).toMatch(/crypto\.randomBytes\(32\)/);
      expect((error as SetupError).message).not.toContain(secret);
    },
  );

  test('a weak secret is a warning outside production, printed once per warn function', async () => {
    const warnings: string[] = [];
    const warn = (message: string): number => warnings.push(message);
    const options = { session: { ...sound, secret: 'keyboard cat' }, production: false, warn };
    const problems = await checkSetup(options);
    await checkSetup(options);
    expect(problems.map((p) => [p.check, p.severity])).toEqual([
      ['weak-session-secret', 'warning'],
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^\[express-platform-login\] An express-session `secret` is weak/);
    expect(warnings[0]).not.toContain('keyboard cat');
  });

  test('every secret of a rotation list is judged', async () => {
    const { problems } = await run({ ...sound, secret: [STRONG, 'old'] });
    expect(problems.map((p) => p.check)).toEqual(['weak-session-secret']);
  });

  test('no secret at all is refused everywhere', async () => {
    await expect(run({ resave: false } as SessionOptions)).rejects.toThrow(/has no `secret`/);
  });
});

describe('checkSetup: resave', () => {
  test.each([
    [true, 'true'],
    [undefined, 'not set (it defaults to true)'],
  ])('resave %s is a warning that says to set resave: false', async (resave, said) => {
    const { problems, warnings } = await run({ ...sound, resave });
    expect(problems.map((p) => [p.check, p.severity])).toEqual([['session-resave', 'warning']]);
    expect(warnings[0]).toContain(`\`resave\` is ${said}`);
    expect(warnings[0]).toContain('Set `resave: false`');
  });
});

describe('checkSetup: Secure cookie without trust proxy', () => {
  const secure: SessionOptions = { ...sound, cookie: { secure: true } };

  test('behind a proxy: refused, naming trust proxy', async () => {
    await expect(run(secure, { app: express(), behindProxy: true })).rejects.toThrow(
      /app\.set\('trust proxy', 1\)/,
    );
  });

  test('proxy unknown: a warning', async () => {
    const { problems } = await run(secure, { app: express() });
    expect(problems.map((p) => [p.check, p.severity])).toEqual([
      ['secure-cookie-without-trust-proxy', 'warning'],
    ]);
  });

  test('no problem with trust proxy set, express-session proxy: true, no proxy, or no Secure cookie', async () => {
    const trusting = express();
    trusting.set('trust proxy', 1);
    await expect(run(secure, { app: trusting, behindProxy: true })).resolves.toEqual({
      problems: [],
      warnings: [],
    });
    expect(
      (await run({ ...secure, proxy: true }, { app: express(), behindProxy: true })).problems,
    ).toEqual([]);
    expect((await run(secure, { app: express(), behindProxy: false })).problems).toEqual([]);
    expect((await run(sound, { app: express(), behindProxy: true })).problems).toEqual([]);
  });
});

describe('checkSetup: the session cookie in production', () => {
  const cookieFindings = async (cookie: SessionOptions['cookie'], production = true) => {
    const { problems, warnings } = await run({ ...sound, cookie }, { production });
    return {
      findings: problems.map((p) => [p.check, p.severity]),
      warnings: warnings.filter((w) => w.includes('session cookie')),
    };
  };

  test("the quick start's options before (no cookie settings: `Path=/; HttpOnly`) are named, with the fix", async () => {
    const { problems, warnings } = await run(sound, { production: true });
    expect(problems.map((p) => [p.check, p.severity])).toEqual([
      ['insecure-session-cookie', 'warning'],
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('has no Secure and no SameSite');
    expect(warnings[0]).toContain("`cookie: { secure: true, sameSite: 'lax' }`");
    expect(warnings[0]).toContain("app.set('trust proxy', 1)");
  });

  test.each<[SessionOptions['cookie'], string]>([
    [{ sameSite: 'lax' }, 'has no Secure:'],
    [{ secure: false, sameSite: 'strict' }, 'has no Secure:'],
    [{ secure: true }, 'has no SameSite:'],
    [{ secure: true, sameSite: false }, 'has no SameSite:'],
    [{ httpOnly: true }, 'has no Secure and no SameSite:'],
  ])('%p is named: %s', async (cookie, named) => {
    const { findings, warnings } = await cookieFindings(cookie);
    expect(findings).toEqual([['insecure-session-cookie', 'warning']]);
    expect(warnings[0]).toContain(named);
  });

  test.each<SessionOptions['cookie']>([
    { secure: true, sameSite: 'lax' },
    { secure: true, sameSite: 'none' },
    { secure: 'auto', sameSite: true },
  ])('%p is fine', async (cookie) => {
    expect(await cookieFindings(cookie)).toEqual({ findings: [], warnings: [] });
  });

  test('outside production a cookie without either is no finding (local http)', async () => {
    expect(await cookieFindings(undefined, false)).toEqual({ findings: [], warnings: [] });
  });
});

describe('checkSetup: connect-redis given ioredis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis({ lazyConnect: true });
  });
  afterAll(() => redis.disconnect());

  /** The shape of connect-redis 9.0.0's store: it keeps the client as given (`this.client = opts.client`). */
  class ConnectRedis9Shape extends MemoryStore {
    prefix = 'sess:';
    serializer = JSON;
    constructor(readonly client: unknown) {
      super();
    }
  }

  test('connect-redis 8.1 (installed) with ioredis is fine', async () => {
    const store = new RedisStore({ client: redis });
    expect(isConnectRedisWithIoredis(store)).toBe(false);
    expect((await run({ ...sound, store })).problems).toEqual([]);
  });

  test('connect-redis 9+ holding an ioredis client is refused, naming connect-redis@~8.1', async () => {
    const store = new ConnectRedis9Shape(redis);
    expect(isConnectRedisWithIoredis(store)).toBe(true);
    await expect(run({ ...sound, store })).rejects.toThrow(/connect-redis@~8\.1/);
  });

  test('connect-redis 9+ with a node-redis client, and other stores, are fine', () => {
    const nodeRedisLike = { get: () => undefined, set: () => undefined, scanIterator: () => [] };
    expect(isConnectRedisWithIoredis(new ConnectRedis9Shape(nodeRedisLike))).toBe(false);
    expect(isConnectRedisWithIoredis(new MemoryStore())).toBe(false);
  });
});
