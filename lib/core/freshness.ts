// Decides, from the record alone, whether a token can be used as it is, should be renewed in the
// background, or must be renewed before the request goes on.
import type { TokenRecord } from './token-record';

/** What to do with a record's access token now. */
export type Freshness = 'fresh' | 'refresh-ahead' | 'refresh-now';

/** Thresholds, computed once from the options. */
export interface FreshnessPolicy {
  /** Absolute margin before expiry inside which a refresh blocks the request. */
  refreshSkewMs: number;
  /** Fraction of the lifetime after which a background refresh starts (1 = never). */
  refreshAheadFraction: number;
}

/** Inside the skew before expiry: a refresh must finish before the request goes on. */
const dueNow = (record: TokenRecord, now: number, skewMs: number): boolean =>
  now >= record.accessExpiresAt - skewMs;

/** Past `fraction` of the token's lifetime (1 = never): time for a background refresh. */
const dueAhead = (record: TokenRecord, now: number, fraction: number): boolean =>
  fraction < 1 &&
  now >= record.obtainedAt + (record.accessExpiresAt - record.obtainedAt) * fraction;

export function freshnessOf(record: TokenRecord, now: number, policy: FreshnessPolicy): Freshness {
  if (dueNow(record, now, policy.refreshSkewMs)) return 'refresh-now';
  if (dueAhead(record, now, policy.refreshAheadFraction)) return 'refresh-ahead';
  return 'fresh';
}

/**
 * `freshnessOf(record, now, policy) === 'fresh'` with the policy's numbers read once: the middleware
 * asks it of every request served from memory, and each object read on that path is a likely
 * cache miss in a busy server.
 */
export function freshTest(policy: FreshnessPolicy): (record: TokenRecord, now: number) => boolean {
  const { refreshSkewMs, refreshAheadFraction } = policy;
  return (record, now) =>
    !dueNow(record, now, refreshSkewMs) && !dueAhead(record, now, refreshAheadFraction);
}

/** True while the access token can still be presented to the platform. */
export const isUsable = (record: TokenRecord, now: number): boolean => now < record.accessExpiresAt;
