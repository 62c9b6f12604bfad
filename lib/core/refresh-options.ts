// The `refresh` options of platformLogin(), and the refresh coordinator's settings derived from them
// once, in the units the coordinator works in.
import { z } from 'zod';
import { integerOption, type OptionsSchema } from '../util/parse-options';

const number = (error: string) => z.number({ error });

const refreshShape = {
  /**
   * Refresh before the handler runs when less than this is left of the access token, in seconds
   * (0 to 3600). Defaults to `60`.
   */
  skewSeconds: number('must be a number of seconds from 0 to 3600').min(0).max(3600).default(60),
  /**
   * Past this fraction of the access token's lifetime, refresh in the background while the request
   * goes on with the current token. `1` turns background refresh off. Defaults to `0.5`.
   */
  aheadFraction: number('must be a number above 0 and at most 1').gt(0).max(1).default(0.5),
  /**
   * After a refresh fails on platform trouble, further refreshes of that login wait this long, in
   * seconds (0 to 300; requests are served with the current token while it is valid). Defaults to `5`.
   */
  failureCooldownSeconds: number('must be a number of seconds from 0 to 300')
    .min(0)
    .max(300)
    .default(5),
  /**
   * Lifetime of a refresh token when the platform does not say (the platform documents 90 days),
   * in seconds. Defaults to `7776000`.
   */
  tokenLifetimeSeconds: number('must be a positive integer number of seconds')
    .int()
    .positive()
    .default(90 * 24 * 3600),
  /**
   * `Retry-After` seconds sent with 503 `platform_unavailable` when the platform sent none (its own
   * figure, capped at 300, is passed on), 1 to 3600. Defaults to `5`.
   */
  retryAfterSeconds: integerOption(1, 3600, ' number of seconds').default(5),
};

/** The `refresh` options of platformLogin(): when and how a login's access token is refreshed. */
export const refreshOptionsSchema: OptionsSchema<typeof refreshShape> =
  z.strictObject(refreshShape);

/** The refresh lock's lifetime: renewed by its living holder, so a dead holder's frees in seconds. */
const REFRESH_LOCK_TTL_MS = 5000;

/** Longest a request waits for another lock holder: its slowest refresh, a dead holder's lock, 1 s. */
export const lockWaitDeadlineMs = (maxRefreshMs: number, lockTtlMs: number): number =>
  maxRefreshMs + lockTtlMs + 1000;

/** Settings of the refresh coordinator (core/refresh.ts), computed once from the options. */
export type RefreshSettings = ReturnType<typeof refreshSettings> & {
  /** Several registrations: a login joins its player's unionid index (core/player-join.ts). */
  joinsPlayers?: boolean;
};

/**
 * The coordinator's settings from the `refresh` options: the lock outlives the slowest refresh the
 * token client can make (`maxRefreshMs`, asked of the client), and records never outlive a session.
 */
export function refreshSettings(
  options: z.output<typeof refreshOptionsSchema>,
  maxRefreshMs: number,
  sessionTtlMs: number,
) {
  return {
    refreshTokenLifetimeMs: options.tokenLifetimeSeconds * 1000,
    maxRefreshMs,
    lockTtlMs: REFRESH_LOCK_TTL_MS,
    lockWaitDeadlineMs: lockWaitDeadlineMs(maxRefreshMs, REFRESH_LOCK_TTL_MS),
    retryAfterSeconds: options.retryAfterSeconds,
    failureCooldownMs: options.failureCooldownSeconds * 1000,
    sessionTtlMs,
    freshness: {
      refreshSkewMs: options.skewSeconds * 1000,
      refreshAheadFraction: options.aheadFraction,
    },
  };
}
