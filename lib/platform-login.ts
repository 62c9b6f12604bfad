// platformLogin(): connects the parts of one platform registration (the token client, the store,
// the refresh coordinator, the HTTP handlers, logs and metrics). The options are parsed once
// (options.ts); each part is built here from its own group, and derives its own settings from it.
import { EventEmitter } from 'node:events';
import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import { createCallbackRouter } from './entry/callback';
import {
  createCsrfProtection,
  isCrossOrigin,
  withCsrfProtection,
} from './cross-site/csrf-protection';
import { createFrameAncestors } from './cross-site/frame-ancestors';
import type { PlatformLoginEvents } from './observability/events';
import { createLogoutHandler, type LogoutOptions } from './http/logout';
import { createMiddleware, parseOptional, type MiddlewareOptions } from './http/middleware';
import {
  parsePlatformLoginOptions,
  type PlatformLoginConfig,
  type PlatformLoginOptions,
} from './options';
import { checkTokenSealing } from './setup/token-sealing-check';
import { MemoryTokenStore } from './core/memory-store';
import { defaultLogger, type PlatformLogger } from './observability/logger';
import { escapingLogger } from './util/log-text';
import { refreshSettings } from './core/refresh-options';
import { entrySettings } from './entry/entry-options';
import { openApiSettings } from './open-api/open-api-options';
import type { ApiSettings, LoggedInPlayer } from './http/player-context';
import { OpenApiClient } from './open-api/open-api-client';
import { OpenApiMetrics } from './open-api/open-api-metrics';
import { RefreshCoordinator } from './core/refresh';
import { createFailHandlers, type FailHandler } from './http/fail-handler';
import type { TokenStore } from './core/token-store';
import { PlatformTokenClient } from './client/token-client';
import { invalidOption } from './errors';
import { platformMetrics } from './observability/metrics';
import { logStoreEvents, observeEvents } from './observability/event-logging';
import { checkReadiness, type ReadinessReport } from './core/readiness';
import type { PlatformHealth } from './observability/platform-health';
import { instrumentedStore } from './core/instrumented-store';
import type { StoreEngine } from './core/store-engine';
import { engineOf } from './core/derived-engine';
import { LoginWatch } from './sockets/login-watch';
import { observeSockets } from './sockets/socket-metrics';
import { PlatformSockets, type SocketsOptions } from './sockets/platform-sockets';
import { loginAccessOf, type LoginAccess } from './sockets/store-access';
import { loginOfPlayer } from './jobs/player-logins';
import { bindAfterLogin } from './entry/after-login';
import { requireScopes } from './http/require-scopes';
import { createCallbackMountCheck, type CallbackMountCheck } from './setup/callback-mount-check';
import { registerCallback } from './setup/mounted-callbacks';
import { registrationsOf, type Registration } from './registrations/registration-options';
import { registrationRefresher } from './registrations/registration-clients';
import { playerKeyOfRef, type PlayerRef } from './registrations/player-ref';
import { logoutReached, reachPlayer } from './core/player-join';
import { createLogoutEverywhereHandler } from './http/logout-everywhere';
import { requestFailure } from './observability/request-failure';

/** The package's parts for one platform registration. Emits {@link PlatformLoginEvents}. */
export class PlatformLogin extends EventEmitter<PlatformLoginEvents> {
  /** The token store in use. */
  readonly store: TokenStore;
  /** The token endpoint client of the first registration. */
  readonly client: PlatformTokenClient;
  /** The logger in use (the `logger` option, or `debug` under `express-platform-login:*`). */
  readonly logger: PlatformLogger;

  /** The store as the package uses it: each call that reaches the backend emits a `storeCall` (the store metrics). */
  private readonly instrumentedStore: StoreEngine;
  private readonly health: PlatformHealth = {
    platformLastAnsweredAt: 0,
    platformLastOutcome: undefined,
  };

  /** The options, parsed: each face reads its own group when the app first asks for it. */
  readonly #config: PlatformLoginConfig;
  // What the entries are built from besides (#builtEntries).
  readonly #clients: Map<string | undefined, PlatformTokenClient>;
  readonly #entryFail: FailHandler;
  readonly #log: PlatformLogger;
  readonly #refreshTokenLifetimeMs: number;
  /** Each registration's entry by name, and all of them at their paths; built on the first ask. */
  #entries: { byName: Map<string, Router>; all: Router } | undefined;
  private readonly refresher: RefreshCoordinator;
  private readonly api: ApiSettings;
  private readonly middlewares = new Map<boolean, RequestHandler>();
  private readonly fail: FailHandler;
  /** What errorHandler() returns (http/fail-handler.ts). */
  private readonly errorAnswer: ErrorRequestHandler;
  /** `gameOrigins`: the game's own pages on other origins, trusted by CSRF protection and sockets. */
  private readonly gameOrigins: ReadonlySet<string>;
  /** CSRF protection for state-changing routes and both logouts (cross-site/csrf-protection.ts). */
  #csrf: RequestHandler | undefined;
  /** The store as sockets use it, and the logins this process's sockets follow; made with the first `sockets()`. */
  #sockets: { access: LoginAccess; watch: LoginWatch } | undefined;
  /** Whether the app mounted each callback where its redirectUri's path reaches it (setup/callback-mount-check.ts). */
  private readonly mountChecks: CallbackMountCheck[] = [];
  /** The registrations, the first one first (registrations/registration-options.ts). */
  private readonly registrations: Registration[];

  // The constructor builds the parts every face shares, each after those it uses; each face (the
  // entries, the middleware, the logouts, CSRF protection, sockets…) is built from them when the
  // app first asks for it.
  constructor(options: PlatformLoginOptions) {
    super();
    // Parsed and checked once (what production refuses too); each part below receives its own group.
    const config = parsePlatformLoginOptions(options);
    this.#config = config;
    this.store = config.store ?? new MemoryTokenStore();
    this.logger = config.logger ?? defaultLogger();
    // Open_ids, the platform's error descriptions, URLs and paths come from outside: every line the
    // package writes is escaped.
    const log = escapingLogger(this.logger);
    this.#log = log;
    this.registrations = registrationsOf(config);
    this.gameOrigins = new Set(config.gameOrigins);
    const sessionTtlMs = config.sessionMaxAgeSeconds * 1000;
    // Where the app mounts a callback is held against its redirectUri's path (a path other than
    // redirectUri's is a 404 the package never sees): said once, on the logger; from the start, as
    // the middleware also looks for a request that should have reached a callback.
    for (const registration of this.registrations)
      this.mountChecks.push(
        createCallbackMountCheck(registration.redirectUri, (fields, message) =>
          log.warn(fields, message),
        ),
      );
    // The parts: the store, how failures end, the clients, refreshes, the API.
    const ring = checkTokenSealing(this.store, config.encryptionKeys, (message) =>
      log.warn({}, message),
    );
    const fail = createFailHandlers({
      events: this,
      logger: log,
      handleErrors: config.handleErrors,
      homePath: config.successRedirect,
    });
    this.fail = fail.request;
    this.#entryFail = fail.entry;
    this.errorAnswer = fail.errors;
    this.instrumentedStore = instrumentedStore(engineOf(this.store, ring), this);
    // One token client per registration: a refresh goes to its record's own (registration-clients.ts).
    const clients = new Map(
      this.registrations.map((registration) => [
        registration.stored,
        new PlatformTokenClient({
          authUrl: config.authUrl,
          clientId: registration.clientId,
          clientSecret: registration.clientSecret,
          redirectUri: registration.redirectUri,
          answerStyle: config.answerStyle,
          answerCodes: config.answerCodes,
          ...config.tokenClient,
          onAttempt: (attempt) => this.emit('tokenAttempt', attempt),
        }),
      ]),
    );
    this.#clients = clients;
    this.client = clients.get(undefined)!;
    const joinsPlayers = this.registrations.length > 1;
    const refresh = {
      ...refreshSettings(config.refresh, this.client.longestRefreshMs, sessionTtlMs),
      joinsPlayers,
    };
    this.#refreshTokenLifetimeMs = refresh.refreshTokenLifetimeMs;
    this.refresher = new RefreshCoordinator(
      this.instrumentedStore,
      registrationRefresher(clients),
      refresh,
      this,
      (durationMs, outcome) => this.emit('lockWait', { durationMs, outcome }),
    );
    const api = openApiSettings(
      config.api,
      config.authUrl,
      config.tokenClient.fetch ?? globalThis.fetch,
    );
    const apiMetrics = new OpenApiMetrics(
      config.meterProvider,
      api.bases.map((base) => base.name),
    );
    this.api = {
      client: new OpenApiClient(api, apiMetrics),
      sessionTtlMs,
      firstRegistration: config.registrationName,
      joinsPlayers,
    };
    // Logs, metrics, spans and readiness follow the parts' events (none is emitted while building).
    const metrics = platformMetrics(config.meterProvider, {
      tokenTimeoutMs: config.tokenClient.timeoutMs,
      maxLockWaitMs: refresh.lockWaitDeadlineMs,
    });
    observeEvents(this, log, metrics, this.health);
    logStoreEvents(this.store, log, metrics);
  }

  /** The first registration's entry, for its redirect_uri path: `app.use('/platform/callback', login.callback)`. */
  get callback(): Router {
    return this.callbackFor(this.#config.registrationName);
  }

  /** Every registration's entry, each at its redirectUri's path: `app.use(login.callbacks)`. */
  get callbacks(): Router {
    return this.#builtEntries().all;
  }

  /**
   * The entry of the registration `name`, for its redirect_uri path:
   * `app.use('/platform/mini/callback', login.callbackFor('mini'))`. Throws a TypeError for a
   * name that is not configured.
   */
  callbackFor(name: string): Router {
    const callback = this.#builtEntries().byName.get(name);
    if (callback === undefined)
      throw new TypeError(
        `login.callbackFor(name): no registration is named ${JSON.stringify(name)}.`,
      );
    return callback;
  }

  /**
   * Middleware for the game's routes: 401 `login_required` without a login (or, with
   * `{ optional: true }`, goes on without `req.platformUser`), refreshes before the handlers run.
   */
  middleware(options: MiddlewareOptions = {}): RequestHandler {
    const optional = parseOptional(options);
    let handler = this.middlewares.get(optional);
    if (handler === undefined) {
      const { refresher, api, fail } = this;
      const { handleErrors } = this.#config;
      const deps = { records: this.instrumentedStore.records, refresher, api, fail, handleErrors };
      handler = checkingMount(
        this.mountChecks,
        createMiddleware({ ...deps, events: this }, optional),
      );
      this.middlewares.set(optional, handler);
    }
    return handler;
  }

  /**
   * WebSockets authenticated from the session cookie, with the `ws` and socket.io adapters:
   * `login.sockets({ session: sessionMiddleware })`. A socket's handler gets the player, `token()`
   * and `fetch()` as a route does, and is told (closed with 4401 by default) within a second when the
   * login ends anywhere. See docs/sockets.md.
   */
  sockets(options: SocketsOptions = {}): PlatformSockets {
    if (this.#sockets === undefined) {
      const access = loginAccessOf(this.instrumentedStore);
      this.#sockets = { access, watch: new LoginWatch(access) };
      observeSockets(this.#config.meterProvider, this.#sockets.watch);
    }
    return new PlatformSockets(
      {
        ...this.#sockets,
        refresher: this.refresher,
        api: this.api,
        isCrossOrigin: (headers) => isCrossOrigin(headers, this.gameOrigins),
        report: (req, error) => this.emit('requestFailed', requestFailure(error, req, 'socket')),
      },
      options,
    );
  }

  /**
   * Middleware after `login.middleware()`: 403 `insufficient_scope` unless the player granted every
   * one of `scopes`. `app.get('/api/pay', login.requireScopes('payments'), handler)`.
   */
  requireScopes(...scopes: string[]): RequestHandler {
    return requireScopes(scopes, this.fail);
  }

  /**
   * A player's login for work with no request (a job, a match's end): the freshest live login of
   * the player (an openId of the first registration, `{ unionId }` or `{ openId, registration }`;
   * docs/registrations.md) in every registration, the one whose record lives longest, with `user`,
   * `token()` and `fetch()` as a route has them, refreshed under the same lock as the player's
   * requests and sockets. Rejects with LoginRequiredError (`login_required`) when the player has no
   * live login. See docs/jobs.md.
   */
  forPlayer(player: PlayerRef): Promise<LoggedInPlayer> {
    const key = playerKeyOfRef(player, this.registrations, 'forPlayer');
    const { records } = this.instrumentedStore;
    return loginOfPlayer({ records, refresher: this.refresher, api: this.api }, key);
  }

  /**
   * Handler that logs the player out: `app.post('/logout', login.logout())`. Requests started by
   * another origin's page are refused (403 `cross_origin_refused`), as with `csrfProtection()`.
   */
  logout(options: LogoutOptions = {}): RequestHandler {
    const deps = { store: this.instrumentedStore, events: this, fail: this.fail };
    return withCsrfProtection(createLogoutHandler(deps, options), this.csrfProtection());
  }

  /**
   * CSRF protection for the game's state-changing routes (POST, PUT, PATCH, DELETE; other methods
   * pass): refuses with 403 `cross_origin_refused` a request another origin's page started
   * (`Sec-Fetch-Site`, else `Origin`), except from `gameOrigins`. Needed once the session cookie is
   * SameSite=None (embedded mode): `app.use('/api', login.csrfProtection(), login.middleware())`.
   */
  csrfProtection(): RequestHandler {
    return (this.#csrf ??= createCsrfProtection(this.gameOrigins, this.fail));
  }

  /**
   * Middleware adding `Content-Security-Policy: frame-ancestors <platformOrigins>`: only the
   * platform's pages may frame the game. Throws a SetupError (`ERR_PLATFORM_INVALID_OPTION`)
   * without the `platformOrigins` option.
   */
  frameAncestors(): RequestHandler {
    // The platform may frame any registration's pages: frame-ancestors allows all their origins.
    const origins = new Set(this.registrations.flatMap((r) => r.platformOrigins ?? []));
    // Refused when the app asks for it, not at creation: without the middleware the option is not needed.
    if (origins.size === 0) {
      throw invalidOption(
        "login.frameAncestors() needs the `platformOrigins` option of platformLogin(): the origins of the platform's pages that frame the game.",
        'platformOrigins',
      );
    }
    return createFrameAncestors([...origins]);
  }

  /**
   * Ends every session of a player on every process at once (a ban, a stolen account), in every
   * registration (`player`: an openId of the first registration, `{ unionId }` or
   * `{ openId, registration }`; docs/registrations.md): their token records are deleted, so their next request answers 401 `login_required`. Resolves how
   * many sessions were ended. A login whose code was being exchanged meanwhile does not survive it.
   * Where the store waits for a replica (docs/durability.md), rejects with StoreUnavailableError
   * when none acknowledged the deletions in time: ask again.
   */
  async logoutPlayer(player: PlayerRef): Promise<number> {
    const key = playerKeyOfRef(player, this.registrations, 'logoutPlayer');
    const sessions = await logoutReached(this.instrumentedStore.records, key);
    const openId = typeof player === 'string' ? player : 'openId' in player ? player.openId : '';
    this.emit('playerLoggedOut', { openId, sessions });
    return sessions;
  }

  /**
   * Handler that ends every login of the requesting player — every registration, browser and
   * process, joined by unionid where the platform gave one — and answers 204 (401 without a
   * login): `app.post('/api/logout-everywhere', login.logoutEverywhere())`. Cross-origin requests
   * are refused as for `logout()`. See docs/registrations.md.
   */
  logoutEverywhere(): RequestHandler {
    const deps = { store: this.instrumentedStore, events: this, fail: this.fail };
    return withCsrfProtection(createLogoutEverywhereHandler(deps), this.csrfProtection());
  }

  /** How many live sessions a player has, in every registration and across all processes sharing the store. */
  async sessionsOf(player: PlayerRef): Promise<number> {
    const key = playerKeyOfRef(player, this.registrations, 'sessionsOf');
    return (await reachPlayer(this.instrumentedStore.records, key)).logins.length;
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
   * `handleErrors: false` and want them answered after their own handling), and a session store
   * failing in front of the package as 503 `store_unavailable`. Each is told as `requestFailed`
   * (logged, counted) unless the package's handlers told it already. Others go on to `next`.
   */
  errorHandler(): ErrorRequestHandler {
    return this.errorAnswer;
  }

  /** Each registration's entry, built on the app's first ask for one (`callback`, `callbacks`, `callbackFor`). */
  #builtEntries(): { byName: Map<string, Router>; all: Router } {
    if (this.#entries !== undefined) return this.#entries;
    const config = this.#config;
    const afterLogin =
      config.afterLogin &&
      bindAfterLogin(config.afterLogin, { refresher: this.refresher, api: this.api });
    const byName = new Map<string, Router>();
    const all = Router();
    this.registrations.forEach((registration, i) => {
      const settings = entrySettings(config.entry, {
        successRedirect: config.successRedirect,
        embedded: config.embedded,
        platformOrigins: registration.platformOrigins,
        // The first secret keys the failure limit's address hashes: one count across registrations.
        clientSecret: config.clientSecret,
        refreshTokenLifetimeMs: this.#refreshTokenLifetimeMs,
        sessionTtlMs: this.api.sessionTtlMs,
      });
      const client = this.#clients.get(registration.stored)!;
      const entry = createCallbackRouter(settings, {
        store: this.instrumentedStore,
        exchangeCode: (code) => client.exchangeCode(code),
        registration: registration.stored,
        joinsPlayers: this.api.joinsPlayers,
        events: this,
        fail: this.#entryFail,
        logger: this.#log,
        afterLogin,
      });
      // The entry behind a router of its own, which checks where the app mounted it. A Router, not
      // a sub-app: however the app mounts it, `req.ip` and every other setting stay the app's own.
      const check = this.mountChecks[i]!;
      const callback = Router();
      registerCallback(callback, check);
      callback.use((req, _res, next) => {
        check.atCallback(req);
        next();
      }, entry);
      byName.set(registration.name, callback);
      all.use(new URL(registration.redirectUri).pathname, callback);
    });
    return (this.#entries = { byName, all });
  }
}

/**
 * `handler` with the mount check in front: until the callback has been reached, each request is
 * looked at (a path comparison); after that, one boolean read.
 */
function checkingMount(checks: CallbackMountCheck[], handler: RequestHandler): RequestHandler {
  return (req, res, next) => {
    for (const check of checks) check.atRequest(req);
    return handler(req, res, next);
  };
}

/** Creates the package's parts for one platform registration; options are validated here. */
export function platformLogin(options: PlatformLoginOptions): PlatformLogin {
  return new PlatformLogin(options);
}
