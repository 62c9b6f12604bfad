// The middleware in front of the game's routes: loads the session's tokens (one records read),
// refreshes them when needed, and sets req.platformUser / hasPlatformLogin / platformToken() /
// platformFetch() on the request (request-members.ts).
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { playerKeyOf, unionKeyOf } from '../core/player-key';
import { z } from 'zod';
import type { EventEmitter } from 'node:events';
import { LoginRequiredError, sessionMissing } from '../errors';
import type { PlatformLoginEvents } from '../observability/events';
import { endsLogin } from '../core/failure-policy';
import { recordRenewalDue, type TokenRecord } from '../core/token-record';
import { NO_LOGIN, PlayerContext, type ApiSettings } from './player-context';
import { sessionTtlMsOf } from '../core/session-lifetime';
import type { RefreshCoordinator } from '../core/refresh';
import type { FailHandler } from './fail-handler';
import { setRequestMembers } from './request-members';
import { hasSession } from './require-session';
import { ignore } from '../util/ignore';
import { hashSessionId } from '../core/hash';
import type { RecordRead, TokenRecords } from '../core/store-engine';
import { parseOptions, type OptionsSchema } from '../util/parse-options';

const middlewareShape = {
  /**
   * `true`: a request without a login goes on (`req.platformUser` is `undefined`) instead of
   * getting a 401. Defaults to `false`.
   */
  optional: z.boolean({ error: 'must be a boolean' }).default(false),
};

const middlewareOptionsSchema: OptionsSchema<typeof middlewareShape> =
  z.strictObject(middlewareShape);

/** Options of `login.middleware()`. */
export type MiddlewareOptions = z.input<typeof middlewareOptionsSchema>;

/** Parses the options of `login.middleware()`, once per call of it: whether a login is optional. */
export const parseOptional = (options: MiddlewareOptions | undefined): boolean =>
  parseOptions(middlewareOptionsSchema, options, 'login.middleware()').optional;

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

/** One request through the middleware, once its session's record is read. */
interface Visit {
  req: Request;
  res: Response;
  next: NextFunction;
  /** What the session remembers of its login (set by the callback). */
  marker: NonNullable<Request['session']['platformLogin']>;
  sessionKey: string;
}

/** The middleware of `login.middleware()`; `optional`: a request without a login goes on. */
export function createMiddleware(deps: MiddlewareDeps, optional: boolean): RequestHandler {
  const { records, refresher, api, fail, events, handleErrors } = deps;

  /** No login on this request: a visitor on an optional route, else 401 `login_required`. */
  function withoutLogin(req: Request, res: Response, next: NextFunction): void {
    if (!optional) return fail(new LoginRequiredError(), req, res, next);
    setRequestMembers(req, NO_LOGIN);
    next();
  }

  /**
   * A session whose login has ended elsewhere (its record gone, or another player's): a required
   * route deletes the session, an optional one drops its marker (docs/how-it-works.md says why).
   */
  function loginEnded({ req, res, next, marker, sessionKey }: Visit): void {
    // Its record's life ran out (a refresh token's known end): said once, by the request that finds it.
    if (marker.recordExpiresAt !== undefined && marker.recordExpiresAt <= Date.now())
      events.emit('loginExpired', { openId: marker.openId, sessionHash: sessionKey });
    if (optional) delete req.session.platformLogin;
    // Not awaited: the answer does not depend on it. A failed delete leaves a session without a
    // record, refused the same way on its next request, and gone at its TTL.
    else if (handleErrors) req.session.destroy(ignore);
    withoutLogin(req, res, next);
  }

  /** What the read found decides; a fresh record needing no renewal passes on at once. */
  function serve(visit: Visit, read: RecordRead): void {
    const { req, res, next, marker, sessionKey } = visit;
    if (read.status === 'unreadable') {
      // A record this process cannot read (a key it lacks, mid key rotation) ends nothing: another
      // process may read it. The session and its marker stay.
      events.emit('unreadableRecord', { sessionHash: sessionKey, reason: read.reason });
      return withoutLogin(req, res, next);
    }
    if (read.status === 'absent' || read.record.openId !== marker.openId) return loginEnded(visit);
    const sessionTtlMs = sessionTtlMsOf(req.session, api.sessionTtlMs);
    const now = Date.now();
    if (
      refresher.isFresh(read.record, now) &&
      !recordRenewalDue(marker.recordExpiresAt, now, sessionTtlMs)
    ) {
      setRequestMembers(
        req,
        new PlayerContext(sessionKey, read.record, refresher, api, sessionTtlMs),
      );
      return next();
    }
    refreshAndRenew(visit, read.record, sessionTtlMs).catch((error: unknown) =>
      fail(error, req, res, next),
    );
  }

  /** A found record that does not serve as it is: refreshed, or its lifetime renewed, first. */
  async function refreshAndRenew(
    { req, res, next, marker, sessionKey }: Visit,
    found: TokenRecord,
    sessionTtlMs: number,
  ): Promise<void> {
    let record: TokenRecord;
    try {
      record = await refresher.forRequest(sessionKey, found, sessionTtlMs);
    } catch (error) {
      // The login ended (reauth_required, login_required): in optional mode, a visitor again.
      if (optional && endsLogin(error)) return withoutLogin(req, res, next);
      throw error;
    }
    // An active session keeps its tokens: the record's lifetime follows the session's, renewed
    // once half of it has passed (the session marker remembers when, so no extra read).
    const now = Date.now();
    if (recordRenewalDue(marker.recordExpiresAt, now, sessionTtlMs)) {
      const ttlMs = Math.min(sessionTtlMs, record.refreshExpiresAt - now);
      // A failed renewal is tried again on the next request; the record has half its life left.
      const renewed =
        ttlMs > 0 &&
        (await records.renew(sessionKey, playerKeyOf(record), ttlMs).catch(() => false));
      if (renewed) marker.recordExpiresAt = now + ttlMs;
      // Its entry in the unionid's index lives as long (see docs/registrations.md).
      if (renewed && api.joinsPlayers === true && record.unionId !== undefined)
        await records.renew(sessionKey, unionKeyOf(record.unionId), ttlMs).catch(() => false);
    }
    setRequestMembers(req, new PlayerContext(sessionKey, record, refresher, api, sessionTtlMs));
    next();
  }

  // Not async: a read that memory answers is served in the same tick; Express 5 watches no promise.
  return function platformLoginMiddleware(req, res, next): void {
    const session = req.session;
    if (!hasSession(session)) return fail(sessionMissing(), req, res, next);
    // Sessions that never logged in carry no marker: answered without a store read.
    const marker = session.platformLogin;
    if (marker === undefined) return withoutLogin(req, res, next);
    // The session key, hashed once here: the store, the refresh and the events all use it.
    const visit: Visit = { req, res, next, marker, sessionKey: hashSessionId(req.sessionID) };
    const held = records.cachedRead?.(visit.sessionKey);
    if (held !== undefined) return serve(visit, held);
    records.get(visit.sessionKey).then(
      (read) => serve(visit, read),
      (error: unknown) => fail(error, req, res, next),
    );
  };
}
