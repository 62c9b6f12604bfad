// The middleware in front of the game's routes: loads the session's tokens (one records read),
// refreshes them when needed, and leaves the request's context for req.platformUser /
// hasPlatformLogin / platformToken() / platformFetch() (defined once, in request-accessors.ts).
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EventEmitter } from 'node:events';
import { loginRequiredWithoutStack, sessionMissing } from '../errors';
import type { PlatformLoginEvents } from '../observability/events';
import { endsLogin } from '../core/failure-policy';
import { recordRenewalDue, type TokenRecord } from '../core/token-record';
import { NO_LOGIN, PlayerContext, type ApiSettings } from './player-context';
import { sessionTtlMsOf } from '../core/session-lifetime';
import type { RefreshCoordinator } from '../core/refresh';
import type { FailHandler } from './fail-handler';
import { setRequestContext } from './request-accessors';
import { hasSession } from './require-session';
import { ignore } from '../util/ignore';
import { hashSessionId } from '../core/hash';
import type { RecordRead, TokenRecords } from '../core/store-engine';

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
  records: TokenRecords;
  refresher: RefreshCoordinator;
  api: ApiSettings;
  events: EventEmitter<PlatformLoginEvents>;
  fail: FailHandler;
  /**
   * The `handleErrors` option: the package answers the refusal itself, and ends a dead session;
   * with the app's own error middleware answering, the session is left in place for it.
   */
  handleErrors: boolean;
}

export function createMiddleware(
  deps: MiddlewareDeps,
  options: MiddlewareOptions = {},
): RequestHandler {
  const optional = options.optional === true;
  const { records, refresher, api, fail, events, handleErrors } = deps;
  // Read once: the path below then touches the session, the record and nothing else of the
  // package's objects (each one more object read is a likely cache miss in a busy server).
  const isFresh = refresher.isFresh;
  const cachedRead = records.cachedRead?.bind(records);
  const fallbackSessionTtlMs = api.sessionTtlMs;

  const noLogin = (req: Request, res: Response, next: NextFunction): void => {
    if (optional) {
      setRequestContext(req, res, NO_LOGIN);
      next();
    } else fail(loginRequiredWithoutStack(), req, res, next);
  };

  /**
   * A session whose login has ended elsewhere: its record is gone (logout, `logoutPlayer`,
   * `reauth_required`, expiry, an operator's `DEL`, a failover) or belongs to another player. On a
   * required route the session is deleted from the session store: the 401 then goes out without
   * waiting for express-session to renew a dead session (one Redis round trip fewer), and the
   * client's later requests are refused from one session read. An optional route keeps the
   * session for the visitor, without the stale marker (express-session saves it).
   */
  const loginEnded = (req: Request, res: Response, next: NextFunction): void => {
    if (optional) {
      delete req.session.platformLogin;
      return noLogin(req, res, next);
    }
    // Not awaited: the answer does not depend on it. A failed delete leaves a session without a
    // record, refused the same way on its next request, and gone at its TTL.
    if (handleErrors) req.session.destroy(ignore);
    fail(loginRequiredWithoutStack(), req, res, next);
  };

  /**
   * A record this process cannot read (a key it lacks, mid key rotation) ends nothing: another
   * process may read it. 401 on a required route, a visitor on an optional one; the session and
   * its marker stay. Every request that sees it answers so, however many share one read.
   */
  const unreadable = (
    req: Request,
    res: Response,
    next: NextFunction,
    read: Extract<RecordRead, { status: 'unreadable' }>,
    sessionKey: string,
  ): void => {
    events.emit('unreadableRecord', { sessionHash: sessionKey, reason: read.reason });
    if (optional) return noLogin(req, res, next);
    fail(loginRequiredWithoutStack(), req, res, next);
  };

  /** A found record that does not serve as it is, or needs its lifetime renewed. */
  async function load(
    req: Request,
    res: Response,
    next: NextFunction,
    marker: LoginMarker,
    sessionKey: string,
    found: TokenRecord,
    sessionTtlMs: number,
  ): Promise<void> {
    try {
      let record = found;
      try {
        record = await refresher.forRequest(sessionKey, record, sessionTtlMs);
      } catch (error) {
        // The login ended (reauth_required, login_required): in optional mode, a visitor again.
        if (optional && endsLogin(error)) return noLogin(req, res, next);
        throw error;
      }
      // An active session keeps its tokens: the record's lifetime follows the session's, renewed
      // once half of it has passed (the session marker remembers when, so no extra read).
      const now = Date.now();
      if (recordRenewalDue(marker.recordExpiresAt, now, sessionTtlMs)) {
        const ttlMs = Math.min(sessionTtlMs, record.refreshExpiresAt - now);
        // A failed renewal is tried again on the next request; the record has half its life left.
        const renewed =
          ttlMs > 0 && (await records.renew(sessionKey, record.openId, ttlMs).catch(() => false));
        if (renewed) marker.recordExpiresAt = now + ttlMs;
      }

      setRequestContext(
        req,
        res,
        new PlayerContext(sessionKey, record, refresher, api, sessionTtlMs),
      );
      next();
    } catch (error) {
      fail(error, req, res, next);
    }
  }

  /** What the read found decides: a fresh record needing no renewal passes on at once. */
  function serve(
    req: Request,
    res: Response,
    next: NextFunction,
    marker: LoginMarker,
    sessionKey: string,
    read: RecordRead,
  ): void {
    if (read.status === 'unreadable') return unreadable(req, res, next, read, sessionKey);
    if (read.status === 'absent' || read.record.openId !== marker.openId)
      return loginEnded(req, res, next);
    const record = read.record;
    const session = req.session;
    const sessionTtlMs = sessionTtlMsOf(session, fallbackSessionTtlMs);
    const now = Date.now();
    if (isFresh(record, now) && !recordRenewalDue(marker.recordExpiresAt, now, sessionTtlMs)) {
      setRequestContext(
        req,
        res,
        new PlayerContext(sessionKey, record, refresher, api, sessionTtlMs),
      );
      return next();
    }
    void load(req, res, next, marker, sessionKey, record, sessionTtlMs);
  }

  // Not async: the read's answer is handled in one callback; Express 5 watches no promise.
  return function platformLoginMiddleware(req, res, next): void {
    // Each property of `req` read once: Express gives every request a hidden class of its own, so
    // each first read of a name is a lookup V8 cannot cache.
    const session = req.session;
    if (!hasSession(session)) return fail(sessionMissing(), req, res, next);
    // Sessions that never logged in carry no marker: answer them without a store read.
    const marker = session.platformLogin;
    if (marker === undefined) return noLogin(req, res, next);
    // The session key, hashed once here: the store, the refresh and the events all use it.
    const sessionKey = hashSessionId(req.sessionID);
    // What memory holds serves at once; only a read that goes to the store waits.
    const held = cachedRead?.(sessionKey);
    if (held !== undefined) return serve(req, res, next, marker, sessionKey, held);
    records.get(sessionKey).then(
      (read) => serve(req, res, next, marker, sessionKey, read),
      (error: unknown) => fail(error, req, res, next),
    );
  };
}
