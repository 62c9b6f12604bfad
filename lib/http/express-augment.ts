// Types the package's members on Express's Request and express-session's SessionData (imported by
// index.ts, so the built .d.ts carries it). Global, so each member is typed as it is behind the
// middleware that sets it (request-members.ts), as `req.session` is behind express-session.
import type {} from 'express-session';
import type { PlatformUser } from './player-context';
import type { OpenApiRequestInit } from '../open-api/open-api-client';

/** The fetch API's Response (inside `namespace Express`, `Response` means Express's own). */
type FetchResponse = Response;

declare global {
  namespace Express {
    interface Request {
      /**
       * The logged-in player (no token in it), or `undefined` for a visitor without a login on a
       * route behind `login.middleware({ optional: true })`: `if (!req.platformUser)` narrows it.
       * Behind the default `login.middleware()` it is always there (a request without a login was
       * answered 401 before the handler), so `req.platformUser!` states what the mount guarantees.
       *
       * On a route the middleware does not cover, none of these members is set (as `req.session`
       * without express-session).
       */
      readonly platformUser?: PlatformUser;
      /**
       * Whether `login.middleware()` found a login on this request: always `true` behind the
       * default middleware, `true` or `false` behind `login.middleware({ optional: true })`. The
       * same as `req.platformUser !== undefined`, which also narrows the player's type.
       */
      readonly hasPlatformLogin: boolean;
      /**
       * Resolves the player's access token, refreshed first when it is near expiry. Rejects with
       * `LoginRequiredError` on an optional route without a login.
       */
      platformToken(): Promise<string>;
      /**
       * Calls the platform's open API (`api.url` + path, or the `api.urls` base named by `init.api`)
       * with the player's token, within `api.timeoutMs`. Resolves the open API's answer whatever its
       * status. Rejects with `LoginRequiredError` on an optional route without a login, a
       * `PlatformError`: `ERR_PLATFORM_API_TIMEOUT` (504 `platform_timeout`) or
       * `ERR_PLATFORM_API_UNREACHABLE` (502 `platform_error`), or the refresh's errors.
       */
      platformFetch(pathOrUrl: string | URL, init?: OpenApiRequestInit): Promise<FetchResponse>;
    }
  }
}

declare module 'express-session' {
  interface SessionData {
    /**
     * Non-secret marker of the login this session holds: the player's openId and a hash of the
     * entry code (to recognise a reload of the entry), and when the token record's store lifetime
     * was last set to end (epoch ms). The tokens themselves are in the token store.
     */
    platformLogin?: {
      openId: string;
      /** The registration the login came through; absent for the first one. */
      registration?: string;
      entry: string;
      recordExpiresAt?: number;
    };
  }
}

export {};
