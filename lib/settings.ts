// The settings of one PlatformLogin, derived once at creation from the options: parsed, checked
// (setup/creation-checks.ts), then turned into the units each part works in. Each part receives
// its own slice and never reads the options or derives a value again.
import type { MeterProvider } from '@opentelemetry/api';
import {
  parsePlatformLoginOptions,
  type PlatformLoginConfig,
  type PlatformLoginOptions,
} from './options';
import { checkCreation } from './setup/creation-checks';
import type { TokenStore } from './core/token-store';
import { MemoryTokenStore } from './stores/memory-store';
import { defaultLogger, type PlatformLogger } from './observability/logger';
import type { MetricsSettings } from './observability/metrics';
import type { PlatformTokenClientOptions } from './client/token-client-options';
import { PlatformTokenClient } from './client/token-client';
import { lockWaitDeadlineMs, type RefreshSettings } from './core/refresh';
import type { OpenApiSettings } from './open-api/open-api-client';
import type { CrossSiteSettings } from './cross-site/cross-site-protection';
import type { EntrySettings } from './entry/callback';
import { entryContextSettings } from './entry/entry-context';
import type { AfterLoginHook } from './entry/after-login';

/** The refresh lock's lifetime: renewed by its living holder, so a dead holder's frees in seconds. */
const REFRESH_LOCK_TTL_MS = 5000;

/** Everything one PlatformLogin is built from; each part receives its slice. */
export interface PlatformLoginSettings {
  /** The token store in use (`store`, or a MemoryTokenStore). */
  store: TokenStore;
  /** The logger in use (`logger`, or defaultLogger(): `debug`, warnings and errors on the console). */
  logger: PlatformLogger;
  /** The app's own logger, when it gave one: failures and warnings are also said there. */
  appLogger: PlatformLogger | undefined;
  meterProvider: MeterProvider | undefined;
  /** The package answers its errors itself (`handleErrors`): a refused request's session may end. */
  handleErrors: boolean;
  /** Where a player without a login enters again (`successRedirect`), linked from the 401 page. */
  homePath: string;
  afterLogin: AfterLoginHook | undefined;
  /** A session's lifetime when its cookie has no `maxAge` (`sessionMaxAgeSeconds`). */
  sessionTtlMs: number;
  tokenClient: Omit<PlatformTokenClientOptions, 'onAttempt'>;
  metrics: MetricsSettings;
  refresh: RefreshSettings;
  api: OpenApiSettings;
  crossSite: CrossSiteSettings;
  entry: EntrySettings;
}

/**
 * Parses and checks the options, and derives every setting once. Throws a SetupError
 * (`ERR_PLATFORM_INVALID_OPTION`) naming the option for a wrong option or a setup that must not
 * start.
 */
export function deriveSettings(options: PlatformLoginOptions): PlatformLoginSettings {
  const config = parsePlatformLoginOptions(options);
  const store = config.store ?? new MemoryTokenStore();
  checkCreation({
    store,
    authUrl: config.authUrl,
    apiUrl: config.api.url,
    redirectUri: config.redirectUri,
    platformOrigins: config.platformOrigins,
    entryContextMode: config.entry.context?.mode,
  });
  const sessionTtlMs = config.sessionMaxAgeSeconds * 1000;
  const refresh = refreshSettings(config, sessionTtlMs);
  return {
    store,
    logger: config.logger ?? defaultLogger(),
    appLogger: config.logger,
    meterProvider: config.meterProvider,
    handleErrors: config.handleErrors,
    homePath: config.successRedirect,
    afterLogin: config.afterLogin,
    sessionTtlMs,
    tokenClient: {
      authUrl: config.authUrl,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      redirectUri: config.redirectUri,
      ...config.tokenClient,
    },
    metrics: {
      tokenTimeoutMs: config.tokenClient.timeoutMs,
      maxLockWaitMs: refresh.lockWaitDeadlineMs,
    },
    refresh,
    api: apiSettings(config),
    crossSite: {
      gameOrigins: new Set(config.gameOrigins),
      platformOrigins: config.platformOrigins,
    },
    entry: entrySettings(config, refresh),
  };
}

/** The refresh coordinator's settings: the lock outlives the slowest refresh the client can make. */
function refreshSettings(config: PlatformLoginConfig, sessionTtlMs: number): RefreshSettings {
  // The slowest refresh the client can make: every attempt timing out, plus backoff.
  const maxRefreshMs = PlatformTokenClient.longestRefreshMs(config.tokenClient);
  return {
    refreshTokenLifetimeMs: config.refresh.tokenLifetimeSeconds * 1000,
    maxRefreshMs,
    lockTtlMs: REFRESH_LOCK_TTL_MS,
    lockWaitDeadlineMs: lockWaitDeadlineMs(maxRefreshMs, REFRESH_LOCK_TTL_MS),
    retryAfterSeconds: config.refresh.retryAfterSeconds,
    failureCooldownMs: config.refresh.failureCooldownSeconds * 1000,
    sessionTtlMs,
    freshness: {
      refreshSkewMs: config.refresh.skewSeconds * 1000,
      refreshAheadFraction: config.refresh.aheadFraction,
    },
  };
}

/** How routes, sockets and jobs reach the open API: its bases by name (`default` is `api.url`). */
function apiSettings(config: PlatformLoginConfig): OpenApiSettings {
  const bases = Object.entries({
    default: config.api.url ?? config.authUrl,
    ...config.api.urls,
  }).map(([name, href]) => ({
    name,
    href: new URL(href).href.replace(/\/+$/, ''),
    url: new URL(href),
  }));
  return {
    bases,
    accessTokenPlacement: config.api.tokenPlacement,
    accessTokenQueryParameter: config.api.tokenQueryParameter,
    timeoutMs: config.api.timeoutMs,
    fetch: config.tokenClient.fetch,
  };
}

/** The entry's parts' settings, in the units they work in. */
function entrySettings(config: PlatformLoginConfig, refresh: RefreshSettings): EntrySettings {
  const { entry } = config;
  return {
    guards: {
      successRedirect: config.successRedirect,
      embedded: config.embedded,
      context: entryContextSettings(entry.context, config.platformOrigins, config.embedded),
    },
    failureLimit: {
      limit: entry.failureLimit,
      windowMs: entry.failureWindowSeconds * 1000,
      ipv6Subnet: entry.ipv6Subnet,
      clientSecret: config.clientSecret,
      budgetPerSecond: entry.failedExchangesPerSecond,
    },
    redemption: {
      refreshTokenLifetimeMs: refresh.refreshTokenLifetimeMs,
      maxExchangesInFlight: entry.maxExchangesInFlight,
      sessionTtlMs: refresh.sessionTtlMs,
    },
    maxCodeLength: entry.maxCodeLength,
    claimTtlMs: entry.codeClaimTtlSeconds * 1000,
    logger: config.logger,
  };
}
