// Adds the package's fields to Express's Request and to express-session's SessionData, so apps get
// them typed. Imported by index.ts so the built .d.ts carries the augmentation.
import type {} from 'express-session';
import type { PlatformUser } from './player-context';

/** The fetch API's Response (inside `namespace Express`, `Response` means Express's own). */
type FetchResponse = Response;

declare global {
  namespace Express {
    interface Request {
      /** The logged-in player; set by `login.middleware()`. */
      platformUser?: PlatformUser;
      /** Resolves the player's access token, refreshed first when it is near expiry. */
      platformToken?: () => Promise<string>;
      /** Calls the platform's open API (`apiUrl` + path) with the player's token. */
      platformFetch?: (pathOrUrl: string | URL, init?: RequestInit) => Promise<FetchResponse>;
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
