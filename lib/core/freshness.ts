// Decides, from the record alone, whether a token can be used as it is, should be renewed in the
// background, or must be renewed before the request goes on.
import type { TokenRecord } from './token-record';

/** Thresholds, computed once from the options. */
export interface FreshnessPolicy {
  /** Absolute margin before expiry inside which a refresh blocks the request. */
  refreshSkewMs: number;
  /** Fraction of the lifetime after which a background refresh starts (1 = never). */
  refreshAheadFraction: number;
}

/**
 * The rule, written once: inside the skew before expiry a refresh must finish first; past
 * `refresh.aheadFraction` of the token's lifetime (1 = never) a background refresh starts.
 */
export function freshnessOf(record: TokenRecord, now: number, policy: FreshnessPolicy) {
  if (now >= record.accessExpiresAt - policy.refreshSkewMs) return 'refresh-now';
  const { refreshAheadFraction: fraction } = policy;
  const lifetimeMs = record.accessExpiresAt - record.obtainedAt;
  if (fraction < 1 && now >= record.obtainedAt + lifetimeMs * fraction) return 'refresh-ahead';
  return 'fresh';
}

/** `freshnessOf(record, now, policy) === 'fresh'`, bound to a policy (the middleware's fast path). */
export const freshTest =
  (policy: FreshnessPolicy): ((record: TokenRecord, now: number) => boolean) =>
  (record, now) =>
    freshnessOf(record, now, policy) === 'fresh';

/** True while the access token can still be presented to the platform. */
export const isUsable = (record: TokenRecord, now: number): boolean => now < record.accessExpiresAt;
