// The one place a player's tokens live: a record in the token store, keyed by the session.
// Tokens are never put in `req.session`: express-session writes the whole session back at the end
// of every request and a slow request would bring an old token back over a newer one.
import type { TokenSetFields } from '../client/token-set';

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
  /**
   * The player's identifier across the studio's registrations, when the platform sent one; once
   * set, kept for the life of the login.
   */
  unionId?: string;
  /**
   * The registration (`registrations[].name`) the login came through; absent for the first one,
   * which is also what records written before several registrations existed read as.
   */
  registration?: string;
  /** Granted scopes. */
  scope: string[];
  /** Compare-and-set version: 1 for the first write, +1 for every later write. */
  version: number;
  /** When the current access token was obtained, epoch milliseconds. */
  obtainedAt: number;
}

/** The fields of a token response the record is built from: a TokenSet's, the refresh token optional. */
export type ReceivedTokens = Omit<TokenSetFields, 'refreshToken'> &
  Partial<Pick<TokenSetFields, 'refreshToken'>>;

/**
 * When the refresh token `tokens` came with ends: the platform's stated end (`refresh_expires_in`)
 * when it gave one, never later than the configured lifetime; `kept` when it stated none and the
 * refresh token was not replaced.
 */
function refreshEnd(
  tokens: ReceivedTokens,
  obtainedAt: number,
  refreshTokenLifetimeMs: number,
  kept?: number,
): number {
  const configured = kept ?? obtainedAt + refreshTokenLifetimeMs;
  return tokens.refreshExpiresIn === undefined
    ? configured
    : Math.min(obtainedAt + tokens.refreshExpiresIn * 1000, obtainedAt + refreshTokenLifetimeMs);
}

/** The first record of a login, from the code exchange; `registration` absent for the first one. */
export function newTokenRecord(
  tokens: ReceivedTokens,
  refreshTokenLifetimeMs: number,
  registration?: string,
): TokenRecord {
  const obtainedAt = tokens.expiresAt - tokens.expiresIn * 1000;
  if (!tokens.refreshToken) throw new TypeError('a code exchange must return a refresh token');
  return {
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    accessExpiresAt: tokens.expiresAt,
    refreshExpiresAt: refreshEnd(tokens, obtainedAt, refreshTokenLifetimeMs),
    openId: tokens.openId,
    ...(tokens.unionId === undefined ? {} : { unionId: tokens.unionId }),
    ...(registration === undefined ? {} : { registration }),
    scope: tokens.scope,
    version: 1,
    obtainedAt,
  };
}

/**
 * The record after a refresh. A response without a refresh token keeps the old one (and its
 * expiry); a new refresh token replaces it and starts a new refresh lifetime. A stated
 * `refresh_expires_in` is the refresh token's end either way.
 */
export function renewedTokenRecord(
  current: TokenRecord,
  tokens: ReceivedTokens,
  refreshTokenLifetimeMs: number,
): TokenRecord {
  const obtainedAt = tokens.expiresAt - tokens.expiresIn * 1000;
  const rotated =
    tokens.refreshToken !== undefined &&
    tokens.refreshToken !== '' &&
    tokens.refreshToken !== current.refreshToken;
  // The first unionid stays: a different one later is refused (refresh.ts says so), not followed.
  const unionId = current.unionId ?? tokens.unionId;
  return {
    accessToken: tokens.accessToken,
    refreshToken: rotated ? tokens.refreshToken! : current.refreshToken,
    accessExpiresAt: tokens.expiresAt,
    refreshExpiresAt: refreshEnd(
      tokens,
      obtainedAt,
      refreshTokenLifetimeMs,
      rotated ? undefined : current.refreshExpiresAt,
    ),
    openId: current.openId,
    ...(unionId === undefined ? {} : { unionId }),
    ...(current.registration === undefined ? {} : { registration: current.registration }),
    scope: tokens.scope.length > 0 ? tokens.scope : current.scope,
    version: current.version + 1,
    obtainedAt,
  };
}

/**
 * Milliseconds the record should live in the store: until its refresh token expires, and never
 * longer than its session (`sessionTtlMs`), so no token outlives the session that holds it.
 */
export function recordTtlMs(record: TokenRecord, now: number, sessionTtlMs: number): number {
  return Math.max(1000, Math.min(record.refreshExpiresAt - now, sessionTtlMs));
}

/**
 * True when a record whose store lifetime ends at `recordExpiresAt` should be given a new one:
 * once half of the session's lifetime has passed since it was last set. A session kept alive by
 * activity thus keeps its tokens, at the cost of one store command per half session lifetime.
 */
export const recordRenewalDue = (
  recordExpiresAt: number | undefined,
  now: number,
  sessionTtlMs: number,
): boolean => recordExpiresAt === undefined || recordExpiresAt - now < sessionTtlMs / 2;
