// At which level a request the package could not serve is logged: setup mistakes at warn and 5xx
// answers at error, so both reach the app's logger (or the console) without `DEBUG`; a player's
// own mistake (a used code, no login) stays at debug, where a flood of them costs nothing.
import type { PlatformErrorCode } from '../errors';
import type { RequestFailure } from './events';

/**
 * Codes that mean the setup is wrong (or an entry was forged, which looks the same from here): a
 * refused entry context (`platformOrigins`), credentials the platform refused, a setup refused on
 * a request.
 */
const SETUP_CODES: ReadonlySet<PlatformErrorCode> = new Set([
  'ERR_PLATFORM_ENTRY_CONTEXT',
  'ERR_PLATFORM_MISCONFIGURED',
  'ERR_PLATFORM_INVALID_OPTION',
]);

/**
 * Setup refusals said once, loudly, where they are found (the missing express-session by the fail
 * handler, a session store that cannot work by the entry's checks): a line per request would repeat them.
 */
const REPORTED_WHERE_FOUND: ReadonlySet<PlatformErrorCode> = new Set([
  'ERR_PLATFORM_SESSION_MISSING',
  'ERR_PLATFORM_SETUP',
]);

export type FailureLevel = 'debug' | 'warn' | 'error';

/** The level of `failure`'s log line. */
export function failureLevel(failure: RequestFailure): FailureLevel {
  const { code, status } = failure;
  if (code === undefined) return 'error';
  if (REPORTED_WHERE_FOUND.has(code)) return 'debug';
  if (SETUP_CODES.has(code)) return 'warn';
  // The platform refused a code because of our redirect_uri: the setup, not the player.
  if (code === 'ERR_PLATFORM_CODE_REJECTED' && failure.message.includes('redirect_uri'))
    return 'warn';
  if (status !== undefined && status >= 500) return 'error';
  return 'debug';
}
