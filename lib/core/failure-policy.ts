// The package's one failure policy: what a failed call to the token endpoint becomes, which
// answers end a login, and when a request goes on with the token it already has.
import {
  codeRejected,
  codesOf,
  hasCode,
  LoginRequiredError,
  isOAuthRefusal,
  isTokenEndpointAnswer,
  platformMisconfigured,
  platformUnavailable,
  reauthRequired,
  type PlatformLoginError,
} from '../errors';
import { isTransientFailure } from '../client/retry';
import type { TokenGrant } from '../client/token-response';
import type { TokenRecord } from './token-record';

/** Longest `Retry-After` taken from the platform, in seconds: a bigger figure is capped to this. */
const MAX_PLATFORM_RETRY_AFTER_SECONDS = 300;
/** The wait of a rate limit that named none (an `errcode` platform sends no `Retry-After`). */
const RATE_LIMIT_WAIT_SECONDS = 10;

/** The platform's rate limit: a 429, or `slow_down` (a rate limit in the body of any style). */
const isRateLimited = (error: unknown): boolean =>
  isTokenEndpointAnswer(error) &&
  (error.httpStatus === 429 || (isOAuthRefusal(error) && error.oauthError === 'slow_down'));

/**
 * The platform's wait carried by a token-endpoint failure, in seconds (capped at
 * {@link MAX_PLATFORM_RETRY_AFTER_SECONDS}): its `Retry-After`, else {@link RATE_LIMIT_WAIT_SECONDS}
 * for a rate limit; `undefined` when it asked for none.
 */
export function platformRetryAfterSeconds(error: unknown): number | undefined {
  const sent = isTokenEndpointAnswer(error) ? error.platformRetryAfterSeconds : undefined;
  const seconds = sent ?? (isRateLimited(error) ? RATE_LIMIT_WAIT_SECONDS : undefined);
  return seconds === undefined ? undefined : Math.min(seconds, MAX_PLATFORM_RETRY_AFTER_SECONDS);
}

/**
 * The package's answer to a failed token-endpoint call (the failure table of the README):
 * - `invalid_grant`: at an entry 400 `code_rejected`; on a refresh 401 `reauth_required` (the
 *   caller deletes the record);
 * - `invalid_client`: 503 `platform_misconfigured`, tokens kept;
 * - a store failure stays 503 `store_unavailable`;
 * - anything else (down, slow, garbage, throttling): at an entry the client's own 502/504; on a
 *   refresh 503 `platform_unavailable` with the platform's `Retry-After` when it sent one, else
 *   `retryAfterSeconds`.
 */
export function answerForTokenFailure(
  error: unknown,
  grant: 'refresh_token',
  retryAfterSeconds: number,
): PlatformLoginError;
/** At an entry, a failure other than `invalid_grant` / `invalid_client` is answered as it is. */
export function answerForTokenFailure(
  error: unknown,
  grant: TokenGrant,
  retryAfterSeconds: number,
): unknown;
export function answerForTokenFailure(
  error: unknown,
  grant: TokenGrant,
  retryAfterSeconds: number,
): unknown {
  if (hasCode(error, 'ERR_PLATFORM_INVALID_GRANT')) {
    return grant === 'authorization_code'
      ? codeRejected({ cause: error })
      : reauthRequired({ cause: error });
  }
  if (hasCode(error, 'ERR_PLATFORM_INVALID_CLIENT')) {
    return platformMisconfigured(grant, error);
  }
  // A store outage, or a login this process will not refresh (its registration was removed).
  if (
    grant === 'authorization_code' ||
    hasCode(error, 'ERR_PLATFORM_STORE_UNAVAILABLE', 'ERR_PLATFORM_REAUTH_REQUIRED')
  ) {
    return error;
  }
  return platformUnavailable('The platform could not refresh the tokens; they were kept.', {
    cause: error,
    retryAfterSeconds: platformRetryAfterSeconds(error) ?? retryAfterSeconds,
  });
}

/**
 * True when an entry failed on its code, which the failed-entry limit counts against the client's
 * address: malformed or used here, or any answer of the token endpoint that is not tokens — an
 * OAuth error (`invalid_grant`, …), an error object in a 200 body, a redirect — except a refusal
 * of the game's own client credentials. The platform's trouble never counts: its outages (a 5xx,
 * a timeout, no connection), its rate limit (held instead, with its wait) and its "busy, try
 * again" in any answer style.
 */
export function failedOnItsCode(error: unknown): boolean {
  if (
    hasCode(
      error,
      'ERR_PLATFORM_INVALID_REQUEST',
      'ERR_PLATFORM_CODE_USED',
      'ERR_PLATFORM_CODE_REJECTED',
    )
  ) {
    return true;
  }
  return (
    isTokenEndpointAnswer(error) &&
    (error.httpStatus ?? 200) < 500 &&
    !hasCode(error, 'ERR_PLATFORM_INVALID_CLIENT') &&
    !isTransientFailure(error)
  );
}

/** True when the error ends the login: the player must enter the game again (401). */
export const endsLogin = (error: unknown): boolean => error instanceof LoginRequiredError;

/**
 * True when a refresh that failed with `error` leaves the request able to go on with `record`:
 * the failure did not end the login and the access token has not expired yet.
 */
export const servesWithCurrentToken = (error: unknown, record: TokenRecord, now: number): boolean =>
  !endsLogin(error) && now < record.accessExpiresAt;

/** True for failures worth holding every process back for (platform trouble, not a lost login). */
export const holdsRefreshesBack = (error: PlatformLoginError): boolean =>
  hasCode(error, ...codesOf('holds'));
