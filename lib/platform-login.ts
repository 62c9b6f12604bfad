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
import { createCallbackRouter } from './callback';
import { isPlatformLoginError, SessionMissingError } from './errors';
import type { PlatformLoginEvents } from './events';
import { createLogoutHandler, type LogoutOptions } from './logout';
import { createMiddleware, type MiddlewareOptions } from './middleware';
import { parsePlatformLoginOptions, type PlatformLoginOptions } from './platform-login-options';
import type { ApiSettings } from './player-context';
import { RefreshCoordinator } from './refresh';
import { respondWithError } from './respond-error';
import { MemoryTokenStore } from './stores/memory-store';
import type { TokenStore } from './stores/token-store';
import { PlatformTokenClient } from './token-client';

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

  private readonly refresher: RefreshCoordinator;
  private readonly api: ApiSettings;
  private readonly middlewares = new Map<boolean, RequestHandler>();
  private readonly fail: (err: unknown, req: Request, res: Response, next: NextFunction) => void;

  constructor(options: PlatformLoginOptions) {
    super();
    const config = parsePlatformLoginOptions(options);
    this.store = config.store ?? new MemoryTokenStore();
    this.client = new PlatformTokenClient({
      authUrl: config.authUrl,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      redirectUri: config.redirectUri,
      ...config.tokenClient,
    });
    const refreshTokenLifetimeMs = config.refreshTokenLifetimeSeconds * 1000;
    const { timeoutMs, refreshRetries, maxRetryDelayMs } = {
      ...CLIENT_DEFAULTS,
      ...config.tokenClient,
    };
    // The lock outlives the slowest refresh the client can make: every attempt timing out, plus backoff.
    const lockTtlMs = timeoutMs * (refreshRetries + 1) + maxRetryDelayMs * refreshRetries + 1000;
    this.refresher = new RefreshCoordinator(
      this.store,
      this.client,
      {
        refreshTokenLifetimeMs,
        lockTtlMs,
        maxWaitMs: lockTtlMs,
        retryAfterSeconds: config.retryAfterSeconds,
        failureCooldownMs: config.refreshFailureCooldownSeconds * 1000,
      },
      this,
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
      if (err instanceof SessionMissingError && !warnedSessionMissing) {
        warnedSessionMissing = true;
        console.error(`[express-platform-login] ${err.message}`);
      }
      if (config.handleErrors && isPlatformLoginError(err)) respondWithError(err, req, res);
      else next(err);
    };

    const forward = (payload: { sessionHash: string; reason: string }): void => {
      this.emit('unreadableRecord', payload);
    };
    const storeEvents = this.store as Partial<Pick<EventEmitter, 'on'>>;
    if (typeof storeEvents.on === 'function')
      storeEvents.on.call(this.store, 'unreadable', forward);

    this.callback = createCallbackRouter({
      store: this.store,
      exchangeCode: (code) => this.client.exchangeCode(code),
      events: this,
      successRedirect: config.successRedirect,
      maxCodeLength: config.maxCodeLength,
      codeClaimTtlMs: config.codeClaimTtlSeconds * 1000,
      refreshTokenLifetimeMs,
      fail: this.fail,
    });
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
          store: this.store,
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

  /** Handler that logs the player out: `app.post('/logout', login.logout())`. */
  logout(options: LogoutOptions = {}): RequestHandler {
    return createLogoutHandler({ store: this.store, events: this, fail: this.fail }, options);
  }

  /**
   * Error middleware that answers the package's errors as documented (for apps that set
   * `handleErrors: false` and want them answered after their own handling). Others go on to `next`.
   */
  errorHandler(): ErrorRequestHandler {
    return (err, req, res, next) => {
      if (isPlatformLoginError(err)) respondWithError(err, req, res);
      else next(err);
    };
  }
}

/** Creates the package's parts for one platform registration; options are validated here. */
export function platformLogin(options: PlatformLoginOptions): PlatformLogin {
  return new PlatformLogin(options);
}
