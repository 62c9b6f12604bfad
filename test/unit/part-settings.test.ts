// Each part's settings, derived once at creation from its own group of platformLogin()'s options,
// in the units it works in; and the creation checks, which need only the parsed options.
import { parsePlatformLoginOptions, type PlatformLoginOptions } from '../../lib/options';
import { refreshSettings } from '../../lib/core/refresh-options';
import { entrySettings } from '../../lib/entry/entry-options';
import { openApiSettings } from '../../lib/open-api/open-api-options';
import { PlatformTokenClient } from '../../lib/client/token-client';
import { creationIssues } from '../../lib/setup/creation-checks';
import { MemoryTokenStore } from '../../lib/core/memory-store';

const base: PlatformLoginOptions = {
  authUrl: 'https://auth.platform.example',
  clientId: 'demo-game',
  clientSecret: 'canary-secret-31c9',
  redirectUri: 'https://game.example/platform/callback',
  platformOrigins: ['https://platform.example'],
};

test('refresh: seconds become milliseconds; the lock outlives the slowest refresh', () => {
  const config = parsePlatformLoginOptions({
    ...base,
    refresh: { skewSeconds: 30, failureCooldownSeconds: 2, tokenLifetimeSeconds: 86_400 },
  });
  const settings = refreshSettings(config.refresh, 7000, 3_600_000);
  expect(settings).toMatchObject({
    sessionTtlMs: 3_600_000,
    refreshTokenLifetimeMs: 86_400_000,
    failureCooldownMs: 2000,
    maxRefreshMs: 7000,
    freshness: { refreshSkewMs: 30_000, refreshAheadFraction: 0.5 },
  });
  expect(settings.lockWaitDeadlineMs).toBe(settings.maxRefreshMs + settings.lockTtlMs + 1000);
});

test("refresh: the slowest refresh is the token client's own figure", () => {
  const config = parsePlatformLoginOptions({ ...base, tokenClient: { timeoutMs: 1000 } });
  const { authUrl, clientId, clientSecret, redirectUri } = config;
  const client = new PlatformTokenClient({
    authUrl,
    clientId,
    clientSecret,
    redirectUri,
    ...config.tokenClient,
  });
  expect(refreshSettings(config.refresh, client.longestRefreshMs, 1).maxRefreshMs).toBe(
    1000 * 3 + 2000 * 2,
  );
});

test('entry: each part of the entry gets its slice, in milliseconds', () => {
  const config = parsePlatformLoginOptions({
    ...base,
    entry: { failureWindowSeconds: 60, codeClaimTtlSeconds: 1200, failureLimit: 7 },
  });
  const settings = entrySettings(config.entry, {
    successRedirect: '/',
    embedded: false,
    platformOrigins: config.platformOrigins,
    clientSecret: config.clientSecret,
    refreshTokenLifetimeMs: 86_400_000,
    sessionTtlMs: 3_600_000,
  });
  expect(settings.failureLimit).toMatchObject({ limit: 7, windowMs: 60_000 });
  expect(settings.claimTtlMs).toBe(1_200_000);
  expect(settings.redemption).toEqual({
    refreshTokenLifetimeMs: 86_400_000,
    maxExchangesInFlight: 64,
    sessionTtlMs: 3_600_000,
  });
  expect(settings.guards.context.mode).toBe('enforce');
});

test('api: the open-API bases, by name, without a trailing slash; `default` falls back to authUrl', () => {
  const config = parsePlatformLoginOptions({
    ...base,
    api: { url: 'https://api.platform.example/v1/', urls: { pay: 'https://pay.example' } },
  });
  const bases = (url?: string) =>
    openApiSettings({ ...config.api, url }, config.authUrl, fetch).bases.map(({ name, href }) => [
      name,
      href,
    ]);
  expect(bases(config.api.url)).toEqual([
    ['default', 'https://api.platform.example/v1'],
    ['pay', 'https://pay.example'],
  ]);
  expect(bases(undefined)[0]).toEqual(['default', 'https://auth.platform.example']);
});

test('a wrong option is a SetupError naming it', () => {
  expect(() => parsePlatformLoginOptions({ ...base, entry: { failureLimit: -1 } })).toThrow(
    expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'entry.failureLimit' }),
  );
});

describe('creationIssues (what production refuses, run by the options schema)', () => {
  const parsed = (options: Partial<PlatformLoginOptions> = {}) =>
    parsePlatformLoginOptions({ ...base, ...options });

  test('production refuses a start without platformOrigins unless a mode is chosen', () => {
    const open = { ...parsed(), platformOrigins: undefined };
    expect(creationIssues(open, true)).toEqual([
      {
        path: ['platformOrigins'],
        message: expect.stringMatching(/^is required under NODE_ENV=production: .*login CSRF/),
      },
    ]);
    const reporting = { ...open, entry: { context: { mode: 'report' as const } } };
    expect(creationIssues(reporting, true)).toEqual([]);
    expect(creationIssues(open, false)).toEqual([]);
  });

  test("production refuses an http:// api.url, naming it by the option's own name", () => {
    const plain = parsed({ api: { url: 'http://api.platform.example' } });
    expect(creationIssues(plain, true)).toEqual([
      {
        path: ['api', 'url'],
        message: expect.stringMatching(/^must be an https:\/\/ URL in production/),
      },
    ]);
  });

  test("under NODE_ENV=production, platformLogin()'s options refuse it as a SetupError naming the option", () => {
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      expect(() => parsed({ api: { url: 'http://api.platform.example' } })).toThrow(
        expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'api.url' }),
      );
      expect(() => parsed({ platformOrigins: undefined })).toThrow(
        expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'platformOrigins' }),
      );
      // A value that is no URL: its own field's refusal, not a TypeError from the production check.
      expect(() => parsed({ redirectUri: '/platform/callback' })).toThrow(
        expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'redirectUri' }),
      );
      expect(() => parsed()).not.toThrow();
    } finally {
      process.env.NODE_ENV = nodeEnv;
    }
  });
});

test('a store lacking a method of the contract is refused with the options, naming the store', () => {
  const store = new MemoryTokenStore();
  const partial = { get: store.get.bind(store), put: store.put.bind(store) };
  expect(() => parsePlatformLoginOptions({ ...base, store: partial as never })).toThrow(
    expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'store' }),
  );
  expect(() => parsePlatformLoginOptions({ ...base, store })).not.toThrow();
});
