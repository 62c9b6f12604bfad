// The middleware in front of the game's routes: loads the session's tokens (one store read),
// refreshes them when needed, and gives the handlers req.platformUser / platformToken / platformFetch.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EventEmitter } from 'node:events';
import { LoginRequiredError } from '../errors';
import type { PlatformLoginEvents } from '../observability/events';
import { endsLogin } from '../core/failure-policy';
import { recordRenewalDue } from '../core/token-record';
import { PlayerContext, sessionTtlMsOf, userOf, type ApiSettings } from './player-context';
import type { RefreshCoordinator } from '../core/refresh';
import { requireSession } from './require-session';
import type { TokenStore } from '../core/token-store';

/** Options of `login.middleware()`. */
export interface MiddlewareOptions {
  /** `true`: a request without a login goes on without `req.platformUser` instead of a 401. Defaults to `false`. */
  optional?: boolean;
}

export interface MiddlewareDeps {
  store: TokenStore;
  refresher: RefreshCoordinator;
  api: ApiSettings;
  events: EventEmitter<PlatformLoginEvents>;
  fail: (err: unknown, req: Request, res: Response, next: NextFunction) => void;
}

export function createMiddleware(
  deps: MiddlewareDeps,
  options: MiddlewareOptions = {},
): RequestHandler {
  const optional = options.optional === true;
  const { store, refresher, api, fail } = deps;

  const noLogin = (req: Request, res: Response, next: NextFunction): void => {
    if (optional) next();
    else fail(new LoginRequiredError(), req, res, next);
  };

  return async function platformLoginMiddleware(req, res, next) {
    try {
      requireSession(req);
      // Sessions that never logged in carry no marker: answer them without a store read.
      const marker = req.session.platformLogin;
      if (marker === undefined) return noLogin(req, res, next);
      const sessionId = req.sessionID;
      let record = await store.get(sessionId);
      if (record === undefined || record.openId !== marker.openId) return noLogin(req, res, next);

      const sessionTtlMs = sessionTtlMsOf(req, api);
      try {
        record = await refresher.forRequest(sessionId, record, sessionTtlMs);
      } catch (error) {
        // The login ended (reauth_required, login_required): in optional mode, a visitor again.
        if (optional && endsLogin(error)) return next();
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

      const context = new PlayerContext(sessionId, record, refresher, api, sessionTtlMs);
      req.platformUser = userOf(record);
      req.platformToken = context.token;
      req.platformFetch = context.fetch;
      next();
    } catch (error) {
      fail(error, req, res, next);
    }
  };
}
