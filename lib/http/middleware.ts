// The middleware in front of the game's routes: loads the session's tokens (one store read),
// refreshes them when needed, and leaves the request's context for req.platformUser /
// hasPlatformLogin / platformToken() / platformFetch() (defined once, in request-accessors.ts).
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { EventEmitter } from 'node:events';
import { LoginRequiredError, PlatformLoginError } from '../errors';
import type { PlatformLoginEvents } from '../observability/events';
import { freshnessOf, isUsable } from '../core/freshness';
import { NO_LOGIN, PlayerContext, type ApiSettings } from './player-context';
import type { RefreshCoordinator } from '../core/refresh';
import type { FailHandler } from './fail-handler';
import { setRequestContext } from './request-accessors';
import { requireSession } from './require-session';
import type { TokenStore } from '../core/token-store';
import type { TokenRecord } from '../core/token-record';

/** Options of `login.middleware()`. */
export interface MiddlewareOptions {
  /**
   * `true`: a request without a login goes on (`req.hasPlatformLogin` is `false`) instead of
   * getting a 401. Defaults to `false`.
   */
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
  const freshness = api.freshness;

  const noLogin = (req: Request, res: Response, next: NextFunction): void => {
    if (optional) {
      setRequestContext(req, NO_LOGIN);
      next();
    } else fail(new LoginRequiredError(), req, res, next);
  };

  /** Everything but a fresh record from memory: the store read, the refresh, the failures. */
  async function load(
    req: Request,
    res: Response,
    next: NextFunction,
    openId: string,
    cached: TokenRecord | undefined,
  ): Promise<void> {
    try {
      const sessionId = req.sessionID;
      let record = cached ?? (await store.get(sessionId));
      if (record === undefined || record.openId !== openId) return noLogin(req, res, next);

      const state = freshnessOf(record, Date.now(), freshness);
      if (state === 'refresh-now') {
        try {
          record = await refresher.refresh(sessionId, record);
        } catch (error) {
          // The login ended (reauth_required, login_required): in optional mode, a visitor again.
          const loginEnded = error instanceof PlatformLoginError && error.status === 401;
          if (loginEnded && optional) return noLogin(req, res, next);
          // Platform trouble with a token that still works: serve the request with it.
          if (loginEnded || !isUsable(record, Date.now())) throw error;
        }
      } else if (state === 'refresh-ahead') {
        // Failures are reported through the refreshFailed event; the request has a usable token.
        refresher.refresh(sessionId, record, true).catch(() => undefined);
      }

      setRequestContext(req, new PlayerContext(sessionId, record, refresher, api));
      next();
    } catch (error) {
      fail(error, req, res, next);
    }
  }

  // Not async: a fresh record held in memory (a store with a client-side cache) passes the request
  // on synchronously, with no promise for Express 5 to watch.
  return function platformLoginMiddleware(req, res, next): void {
    try {
      requireSession(req);
    } catch (error) {
      return fail(error, req, res, next);
    }
    // Sessions that never logged in carry no marker: answer them without a store read.
    const marker = req.session.platformLogin;
    if (marker === undefined) return noLogin(req, res, next);
    const cached = store.getCached?.(req.sessionID);
    if (
      cached !== undefined &&
      cached.openId === marker.openId &&
      freshnessOf(cached, Date.now(), freshness) === 'fresh'
    ) {
      setRequestContext(req, new PlayerContext(req.sessionID, cached, refresher, api));
      return next();
    }
    void load(req, res, next, marker.openId, cached);
  };
}
