// platformLogin(): wires the token client, the store and the refresh coordinator into the callback
// router, the middleware and the logout handler. Everything is computed here, once.
import { EventEmitter } from 'node:events';
import type {
  ErrorRequestHandler,
  NextFunction,
  Request,
  RequestHandler,
  Response,
  Router,
} from 'express';
import { createCallbackRouter } from './http/callback';
import { createHardening, type Hardening } from './http/entry-guards';
import { isPlatformLoginError, SessionMissingError, StoreUnavailableError } from './errors';
import { isRedisOutage } from './stores/redis-outage';
import type { PlatformLoginEvents } from './observability/events';
import { createLogoutHandler, type LogoutOptions } from './http/logout';
import { createMiddleware, type MiddlewareOptions } from './http/middleware';
import { parsePlatformLoginOptions, type PlatformLoginOptions } from './options';
import type { ApiSettings } from './http/player-context';
import { RefreshCoordinator } from './core/refresh';
import { respondWithError } from './http/respond-error';
import { MemoryTokenStore } from './stores/memory-store';
import type { TokenStore } from './core/token-store';
import { PlatformTokenClient } from './client/token-client';
import { debugLogger, type PlatformLogger } from './observability/logger';
import { PlatformMetrics } from './observability/metrics';
import {
  lockWaitObserver,
  logAnsweredError,
  observeEvents,
  tokenAttemptObserver,
} from './observability/event-logging';
import { checkReadiness, type ReadinessReport } from './core/readiness';
import type { PlatformHealth } from './observability/platform-health';
import { InstrumentedTokenStore } from './stores/instrumented-store';

/** Defaults of the token client that bound how long one refresh can take (see token-client-options.ts). */
const CLIENT_DEFAULTS = { timeoutMs: 5000, refreshRetries: 2, maxRetryDelayMs: 2000 };

/** The package's parts for one platform registration. Emits {@link PlatformLoginEvents}. */
export class PlatformLogin extends EventEmitter<PlatformLoginEvents> {
  /** Router for the redirect_uri path: `app.use('/platform/callback', login.callback)`. */
  readonly callback: Router;
  /** The token store in use. */
  readonly store: TokenStore;
  /** The token endpoint client in use. */
  readonly client: PlatformTokenClient;
  /** The logger in use (the `logger` option, or `debug` under `express-platform-login:*`). */
  readonly logger: PlatformLogger;

  /** The store as the package uses it: timed and counted for metrics and readiness. */
  private readonly instrumentedStore: InstrumentedTokenStore;
  private readonly health: PlatformHealth = {
    platformLastAnsweredAt: 0,
    platformLastOutcome: undefined,
  };

  private readonly refresher: RefreshCoordinator;
  private readonly api: ApiSettings;
  private readonly middlewares = new Map<boolean, RequestHandler>();
  private readonly fail: (err: unknown, req: Request, res: Response, next: NextFunction) => void;
  /** Entry guards, frame-ancestors and CSRF protection (hardening.ts). */
  private readonly hardening: Hardening;

  constructor(options: PlatformLoginOptions) {
    super();
    const config = parsePlatformLoginOptions(options);
    this.store = config.store ?? new MemoryTokenStore();
    this.logger = config.logger ?? debugLogger();
    const refreshTokenLifetimeMs = config.refreshTokenLifetimeSeconds * 1000;
    // `??` per field: an option given as `undefined` must still get its default.
    const timeoutMs = config.tokenClient?.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs;
    const refreshRetries = config.tokenClient?.refreshRetries ?? CLIENT_DEFAULTS.refreshRetries;
    const maxRetryDelayMs = config.tokenClient?.maxRetryDelayMs ?? CLIENT_DEFAULTS.maxRetryDelayMs;
    // The lock outlives the slowest refresh the client can make: every attempt timing out, plus backoff.
    const lockTtlMs = timeoutMs * (refreshRetries + 1) + maxRetryDelayMs * refreshRetries + 1000;
    // Waiters outlast the lock a little, so a holder that died is taken over rather than given up on.
    const maxWaitMs = lockTtlMs + 1000;
    const metrics = new PlatformMetrics(config.meterProvider, {
      tokenTimeoutMs: timeoutMs,
      maxLockWaitMs: maxWaitMs,
    });
    const store = new InstrumentedTokenStore(this.store, metrics);
    this.instrumentedStore = store;
    observeEvents(this, this.logger, metrics);
    this.client = new PlatformTokenClient({
      authUrl: config.authUrl,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      redirectUri: config.redirectUri,
      ...config.tokenClient,
      onAttempt: tokenAttemptObserver(this.logger, metrics, this.health),
    });
    this.refresher = new RefreshCoordinator(
      store,
      this.client,
      {
        refreshTokenLifetimeMs,
        lockTtlMs,
        maxWaitMs,
        retryAfterSeconds: config.retryAfterSeconds,
        failureCooldownMs: config.refreshFailureCooldownSeconds * 1000,
      },
      this,
      lockWaitObserver(metrics),
    );
    const apiUrl = new URL(config.apiUrl ?? config.authUrl);
    this.api = {
      apiBase: apiUrl.href.replace(/\/+$/, ''),
      apiUrl,
      accessTokenPlacement: config.accessTokenPlacement,
      accessTokenQueryParameter: config.accessTokenQueryParameter,
      freshness: {
        refreshSkewMs: config.refreshSkewSeconds * 1000,
        refreshAheadFraction: config.refreshAheadFraction,
      },
    };

    let warnedSessionMissing = false;
    this.fail = (err, req, res, next) => {
      logAnsweredError(this.logger, err, req);
      if (err instanceof SessionMissingError && !warnedSessionMissing) {
        warnedSessionMissing = true;
        console.error(`[express-platform-login] ${err.message}`);
      }
      if (config.handleErrors && isPlatformLoginError(err)) respondWithError(err, req, res);
      else next(err);
    };
    this.hardening = createHardening(config, this, this.fail);

    const forward = (payload: { sessionHash: string; reason: string }): void => {
      this.emit('unreadableRecord', payload);
    };
    const storeEvents = this.store as Partial<Pick<EventEmitter, 'on'>>;
    if (typeof storeEvents.on === 'function') {
      storeEvents.on.call(this.store, 'unreadable', forward);
      // Emitted at most once per store: the server refused CLIENT TRACKING.
      storeEvents.on.call(this.store, 'recordCacheUnavailable', (e: { reason: string }) =>
        this.logger.warn(
          { event: 'recordCacheUnavailable', reason: e.reason },
          'Redis refused client tracking: token records are read from Redis on every request (see docs/caching.md)',
        ),
      );
    }

    this.callback = this.hardening.guardCallback(
      createCallbackRouter({
        store,
        exchangeCode: (code) => this.client.exchangeCode(code),
        events: this,
        successRedirect: this.hardening.successRedirect,
        maxCodeLength: config.maxCodeLength,
        codeClaimTtlMs: config.codeClaimTtlSeconds * 1000,
        refreshTokenLifetimeMs,
        fail: this.fail,
      }),
    );
  }

  /**
   * Middleware for the game's routes: 401 `login_required` without a login (or, with
   * `{ optional: true }`, goes on without `req.platformUser`), refreshes before the handlers run.
   */
  middleware(options: MiddlewareOptions = {}): RequestHandler {
    const optional = options.optional === true;
    let handler = this.middlewares.get(optional);
    if (handler === undefined) {
      handler = createMiddleware(
        {
          store: this.instrumentedStore,
          refresher: this.refresher,
          api: this.api,
          events: this,
          fail: this.fail,
        },
        { optional },
      );
      this.middlewares.set(optional, handler);
    }
    return handler;
  }

  /**
   * Handler that logs the player out: `app.post('/logout', login.logout())`. Requests started by
   * another origin's page are refused (403 `cross_origin_refused`), as with `csrfProtection()`.
   */
  logout(options: LogoutOptions = {}): RequestHandler {
    return this.hardening.protectLogout(
      createLogoutHandler(
        { store: this.instrumentedStore, events: this, fail: this.fail },
        options,
      ),
    );
  }

  /**
   * CSRF protection for the game's state-changing routes (POST, PUT, PATCH, DELETE; other methods
   * pass): refuses with 403 `cross_origin_refused` a request another origin's page started
   * (`Sec-Fetch-Site`, else `Origin`), except from `gameOrigins`. Needed once the session cookie is
   * SameSite=None (embedded mode): `app.use('/api', login.csrfProtection(), login.middleware())`.
   */
  csrfProtection(): RequestHandler {
    return this.hardening.csrfProtection();
  }

  /**
   * Middleware adding `Content-Security-Policy: frame-ancestors <platformOrigins>`: only the
   * platform's pages may frame the game. Throws a TypeError without the `platformOrigins` option.
   */
  frameAncestors(): RequestHandler {
    return this.hardening.frameAncestors();
  }

  /**
   * Ends every session of a player on every process at once (a ban, a stolen account): their
   * token records are deleted, so their next request answers 401 `login_required`. Resolves how
   * many sessions were ended. Needs a store with a per-player index (both built-in stores have one).
   */
  async logoutPlayer(openId: string): Promise<number> {
    const sessions = await this.instrumentedStore.deletePlayer(openId);
    this.emit('playerLoggedOut', { openId, sessions });
    return sessions;
  }

  /** How many live sessions a player has, across all processes sharing the store. */
  sessionsOf(openId: string): Promise<number> {
    return this.instrumentedStore.sessionsOf(openId);
  }

  /**
   * Readiness for a `/readyz` route: whether the token store answers now (within its own deadline),
   * and when the platform's token endpoint last answered.
   */
  ready(): Promise<ReadinessReport> {
    return checkReadiness(this.instrumentedStore, this.health);
  }

  /**
   * Error middleware that answers the package's errors as documented (for apps that set
   * `handleErrors: false` and want them answered after their own handling). Others go on to `next`.
   */
  errorHandler(): ErrorRequestHandler {
    return (err, req, res, next) => {
      if (isPlatformLoginError(err)) return respondWithError(err, req, res);
      // A session store (connect-redis) failing inside express-session, before the package ran.
      if (isRedisOutage(err)) {
        const outage = new StoreUnavailableError('The session store is unreachable.', {
          cause: err,
        });
        logAnsweredError(this.logger, outage, req);
        return respondWithError(outage, req, res);
      }
      next(err);
    };
  }
}

/** Creates the package's parts for one platform registration; options are validated here. */
export function platformLogin(options: PlatformLoginOptions): PlatformLogin {
  return new PlatformLogin(options);
}
