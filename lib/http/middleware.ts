// The middleware in front of the game's routes: loads the session's tokens (one store read),
// refreshes them when needed, and gives the handlers req.platformUser / platformToken / platformFetch.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EventEmitter } from 'node:events';
import { LoginRequiredError, PlatformLoginError } from '../errors';
import type { PlatformLoginEvents } from '../observability/events';
import { freshnessOf, isUsable } from '../core/freshness';
import { PlayerContext, userOf, type ApiSettings } from './player-context';
import type { RefreshCoordinator } from '../core/refresh';
import type { FailHandler } from './fail-handler';
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
  fail: FailHandler;
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

      const state = freshnessOf(record, Date.now(), api.freshness);
      if (state === 'refresh-now') {
        try {
          record = await refresher.refresh(sessionId, record);
        } catch (error) {
          // The login ended (reauth_required, login_required): in optional mode, a visitor again.
          const loginEnded = error instanceof PlatformLoginError && error.status === 401;
          if (loginEnded && optional) return next();
          // Platform trouble with a token that still works: serve the request with it.
          if (loginEnded || !isUsable(record, Date.now())) throw error;
        }
      } else if (state === 'refresh-ahead') {
        // Failures are reported through the refreshFailed event; the request has a usable token.
        refresher.refresh(sessionId, record, true).catch(() => undefined);
      }

      const context = new PlayerContext(sessionId, record, refresher, api);
      req.platformUser = userOf(record);
      req.platformToken = context.token;
      req.platformFetch = context.fetch;
      next();
    } catch (error) {
      fail(error, req, res, next);
    }
  };
}
