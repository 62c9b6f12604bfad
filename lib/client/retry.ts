// When a failed refresh is tried again, and after how long: transient failures only, exponential
// backoff with full jitter, and a server's Retry-After honoured only when it fits the wait budget.
import { hasCode, isOAuthRefusal } from '../errors';
import type { TokenClientConfig } from './token-client-options';

/** How a refresh is retried: the client's options of that name. */
export type RetryPolicy = Pick<
  TokenClientConfig,
  'refreshRetries' | 'retryBaseDelayMs' | 'maxRetryDelayMs'
>;

/** A failed attempt: the error it ended with and the server's Retry-After, if it sent one. */
export interface FailedAttempt {
  error: unknown;
  retryAfterMs?: number | undefined;
}

/**
 * OAuth error codes that say "try again later" rather than "this request is wrong" (`slow_down`:
 * a rate limit in the body, answer-styles.ts).
 */
const TRANSIENT_OAUTH_ERRORS = new Set(['temporarily_unavailable', 'server_error', 'slow_down']);

const isTransientStatus = (status: number | undefined): boolean =>
  status !== undefined && (status >= 500 || status === 429);

/**
 * True when the same request may well succeed a moment later: no answer (network, timeout), a 5xx
 * or 429, or an OAuth `temporarily_unavailable`/`server_error`. `invalid_grant` and `invalid_client`
 * never are, whatever the status, and neither is a 2xx with a broken body.
 */
export function isTransientFailure(error: unknown): boolean {
  if (hasCode(error, 'ERR_PLATFORM_NETWORK', 'ERR_PLATFORM_TIMEOUT')) return true;
  if (isOAuthRefusal(error)) {
    if (error.code !== 'ERR_PLATFORM_REFUSED') return false;
    return isTransientStatus(error.httpStatus) || TRANSIENT_OAUTH_ERRORS.has(error.oauthError);
  }
  if (hasCode(error, 'ERR_PLATFORM_INVALID_RESPONSE')) return isTransientStatus(error.httpStatus);
  return false;
}

/** Delta-seconds form of Retry-After (RFC 9110 10.2.3). */
const DELTA_SECONDS = /^\d{1,9}$/;
/** An HTTP-date starts with a day name ("Sun, 06 Nov 1994 …", or the obsolete forms). */
const HTTP_DATE = /^[A-Za-z]{3}/;

/**
 * Milliseconds a `Retry-After` header asks to wait (seconds or an HTTP date; a past date is 0), or
 * `undefined` when the header is absent or unreadable.
 */
export function parseRetryAfterMs(
  header: string | null | undefined,
  now: number,
): number | undefined {
  if (header === null || header === undefined) return undefined;
  const value = header.trim();
  if (DELTA_SECONDS.test(value)) return Number(value) * 1000;
  if (!HTTP_DATE.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The wait before retry number `attempt + 1` after `failure`, or `undefined` when it must not be
 * retried: retries used up, not transient, or a Retry-After beyond `maxRetryDelayMs`. The backoff
 * is full jitter, a uniformly random wait in [0, min(maxRetryDelayMs, retryBaseDelayMs * 2^attempt)),
 * so that many processes retrying after the same outage do not arrive together.
 */
export function retryDelayMs(
  failure: FailedAttempt,
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.refreshRetries || !isTransientFailure(failure.error)) return undefined;
  const { retryAfterMs = 0 } = failure;
  if (retryAfterMs > policy.maxRetryDelayMs) return undefined;
  const ceiling = Math.min(policy.maxRetryDelayMs, policy.retryBaseDelayMs * 2 ** attempt);
  return Math.max(retryAfterMs, Math.floor(random() * ceiling));
}
