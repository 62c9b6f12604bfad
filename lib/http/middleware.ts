// The middleware in front of the game's routes: loads the session's tokens (one store read),
// refreshes them when needed, and leaves the request's context for req.platformUser /
// hasPlatformLogin / platformToken() / platformFetch() (defined once, in request-accessors.ts).
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EventEmitter } from 'node:events';
import { LoginRequiredError, SessionMissingError } from '../errors';
import type { PlatformLoginEvents } from '../observability/events';
import { endsLogin } from '../core/failure-policy';
import { recordRenewalDue, type TokenRecord } from '../core/token-record';
import { NO_LOGIN, PlayerContext, sessionTtlMsOf, type ApiSettings } from './player-context';
import type { RefreshCoordinator } from '../core/refresh';
import type { FailHandler } from './fail-handler';
import { setRequestContext } from './request-accessors';
import { hasSession } from './require-session';
import { ignore } from '../util/ignore';
import type { UnreadableSessions } from '../core/unreadable-sessions';
import type { TokenStore } from '../core/token-store';

/** Options of `login.middleware()`. */
export interface MiddlewareOptions {
  /**
   * `true`: a request without a login goes on (`req.hasPlatformLogin` is `false`) instead of
   * getting a 401. Defaults to `false`.
   */
  optional?: boolean;
}

/** What the session remembers of its login (set by the callback). */
type LoginMarker = NonNullable<Request['session']['platformLogin']>;

export interface MiddlewareDeps {
  store: TokenStore;
  refresher: RefreshCoordinator;
  api: ApiSettings;
  events: EventEmitter<PlatformLoginEvents>;
  fail: FailHandler;
  /** Sessions whose record the store could not read (not ended: another process may read it). */
  unreadable: UnreadableSessions;
  /**
   * The `handleErrors` option: the package answers the refusal itself, and ends a dead session;
   * with the app's own error middleware answering, the session is left in place for it.
   */
  handleErrors: boolean;
}

/** No stack (it shows only Express): saves 18 µs, 4 % of a 401's CPU (bench/micro/cleverness.ts). */
function stacklessLoginRequired(): LoginRequiredError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new LoginRequiredError();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export function createMiddleware(
  deps: MiddlewareDeps,
  options: MiddlewareOptions = {},
): RequestHandler {
  const optional = options.optional === true;
  const { store, refresher, api, fail, unreadable, handleErrors } = deps;
  // Read once: the fast path below then touches the session, the cached record and nothing else
  // of the package's objects (each one more object read is a likely cache miss in a busy server).
  const isFresh = refresher.isFresh;
  const renews = store.touch !== undefined;
  const fallbackSessionTtlMs = api.sessionTtlMs;

  const noLogin = (req: Request, res: Response, next: NextFunction): void => {
    if (optional) {
      setRequestContext(req, res, NO_LOGIN);
      next();
    } else fail(stacklessLoginRequired(), req, res, next);
  };

  /**
   * A session whose login has ended elsewhere: its record is gone (logout, `logoutPlayer`,
   * `reauth_required`, expiry, an operator's `DEL`, a failover) or belongs to another player. On a
   * required route the session is deleted from the session store: the 401 then goes out without
   * waiting for express-session to renew a dead session (one Redis round trip fewer), and the
   * client's later requests are refused from one session read. An optional route keeps the
   * session for the visitor, without the stale marker (express-session saves it). A record this
   * process could not read (a key it lacks) ends nothing: another process may read it.
   */
  const loginEnded = (req: Request, res: Response, next: NextFunction): void => {
    const readable = !unreadable.take(req.sessionID);
    if (optional) {
      if (readable) delete req.session.platformLogin;
      return noLogin(req, res, next);
    }
    // Not awaited: the answer does not depend on it. A failed delete leaves a session without a
    // record, refused the same way on its next request, and gone at its TTL.
    if (readable && handleErrors) req.session.destroy(ignore);
    fail(stacklessLoginRequired(), req, res, next);
  };

  /** Everything but a fresh record from memory: the store read, the refresh, the renewal, the failures. */
  async function load(
    req: Request,
    res: Response,
    next: NextFunction,
    marker: LoginMarker,
    cached: TokenRecord | undefined,
    sessionTtlMs: number,
  ): Promise<void> {
    try {
      const sessionId = req.sessionID;
      let record = cached ?? (await store.get(sessionId));
      if (record === undefined || record.openId !== marker.openId)
        return loginEnded(req, res, next);

      try {
        record = await refresher.forRequest(sessionId, record, sessionTtlMs);
      } catch (error) {
        // The login ended (reauth_required, login_required): in optional mode, a visitor again.
        if (optional && endsLogin(error)) return noLogin(req, res, next);
        throw error;
      }
      // An active session keeps its tokens: the record's lifetime follows the session's, renewed
      // once half of it has passed (the session marker remembers when, so no extra read).
      const now = Date.now();
      if (
        store.touch !== undefined &&
        recordRenewalDue(marker.recordExpiresAt, now, sessionTtlMs)
      ) {
        const ttlMs = Math.min(sessionTtlMs, record.refreshExpiresAt - now);
        // A failed renewal is tried again on the next request; the record has half its life left.
        const touched = await store.touch(sessionId, record.openId, ttlMs).catch(() => false);
        if (ttlMs > 0 && touched) {
          marker.recordExpiresAt = now + ttlMs;
        }
      }

      setRequestContext(
        req,
        res,
        new PlayerContext(sessionId, record, refresher, api, sessionTtlMs),
      );
      next();
    } catch (error) {
      fail(error, req, res, next);
    }
  }

  // Not async: a fresh record held in memory (a store with a client-side cache) whose lifetime
  // needs no renewal passes the request on synchronously, with no promise for Express 5 to watch.
  return function platformLoginMiddleware(req, res, next): void {
    // Each property of `req` read once: Express gives every request a hidden class of its own, so
    // each first read of a name is a lookup V8 cannot cache.
    const session = req.session;
    if (!hasSession(session)) return fail(new SessionMissingError(), req, res, next);
    // Sessions that never logged in carry no marker: answer them without a store read.
    const marker = session.platformLogin;
    if (marker === undefined) return noLogin(req, res, next);
    const sessionId = req.sessionID;
    const sessionTtlMs = sessionTtlMsOf(session, fallbackSessionTtlMs);
    const now = Date.now();
    const cached = store.getCached?.(sessionId, now);
    if (cached !== undefined && cached.openId === marker.openId) {
      if (
        isFresh(cached, now) &&
        (!renews || !recordRenewalDue(marker.recordExpiresAt, now, sessionTtlMs))
      ) {
        setRequestContext(
          req,
          res,
          new PlayerContext(sessionId, cached, refresher, api, sessionTtlMs),
        );
        return next();
      }
    }
    void load(req, res, next, marker, cached, sessionTtlMs);
  };
}
