// Adds the package's members to Express's Request and to express-session's SessionData, so apps get
// them typed. Imported by index.ts so the built .d.ts carries the augmentation. The members are
// always present (request-accessors.ts defines them on Express's request prototype), so handlers
// type-check under `--strict` without `!`; without a login they throw or reject instead.
import type {} from 'express-session';
import type { PlatformUser } from './player-context';
import type { OpenApiRequestInit } from '../open-api/open-api-client';

/** The fetch API's Response (inside `namespace Express`, `Response` means Express's own). */
type FetchResponse = Response;

declare global {
  namespace Express {
    interface Request {
      /**
       * The logged-in player (no token in it). Behind `login.middleware()` it is always there; on
       * an optional route without a login, reading it throws `LoginRequiredError` (401
       * `login_required` through the error handler): check {@link hasPlatformLogin} first there.
       * On a route the middleware does not cover it throws `SetupError`.
       */
      readonly platformUser: PlatformUser;
      /**
       * Whether `login.middleware()` found a login on this request: always `true` behind the
       * default middleware, `true` or `false` behind `login.middleware({ optional: true })`.
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
    platformLogin?: { openId: string; entry: string; recordExpiresAt?: number };
  }
}

export {};
