// The one place a player's tokens live: a record in the token store, keyed by the session.
// Tokens are never put in `req.session`: express-session writes the whole session back at the end
// of every request and a slow request would bring an old token back over a newer one.

/** What the store keeps for one session. Nothing else from the platform's response is kept. */
export interface TokenRecord {
  /** Credential for the open APIs. */
  accessToken: string;
  /** Credential used only to refresh the access token. */
  refreshToken: string;
  /** When the access token expires, epoch milliseconds. */
  accessExpiresAt: number;
  /** When the refresh token expires, epoch milliseconds (the platform states 90 days). */
  refreshExpiresAt: number;
  /** The player's identifier within this application; pinned for the life of the login. */
  openId: string;
  /** Additional user identifier, when the platform sent one. */
  unionId?: string;
  /** Granted scopes. */
  scope: string[];
  /** Compare-and-set version: 1 for the first write, +1 for every later write. */
  version: number;
  /** When the current access token was obtained, epoch milliseconds. */
  obtainedAt: number;
}
