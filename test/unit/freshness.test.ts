// The middleware's fast path asks freshTest(policy); every other path asks freshnessOf. They must
// agree on every record at every moment, or a request would skip a refresh another path would start.
import { freshTest, freshnessOf, type FreshnessPolicy } from '../../lib/core/freshness';
import { sampleRecord } from 'express-platform-login/testing';

const MINUTE = 60_000;

describe('freshTest agrees with freshnessOf', () => {
  const obtainedAt = 1_000_000;
  const record = sampleRecord(1, { obtainedAt, accessExpiresAt: obtainedAt + 60 * MINUTE });
  // From before the token was obtained to past its expiry, every 30 s, plus the exact boundaries.
  const moments = [
    ...Array.from({ length: 130 }, (_, step) => obtainedAt - MINUTE + step * 30_000),
    obtainedAt + 45 * MINUTE,
    obtainedAt + 55 * MINUTE,
    obtainedAt + 60 * MINUTE,
  ];

  test.each<[string, FreshnessPolicy]>([
    ['no refresh ahead (fraction 1)', { refreshSkewMs: 5 * MINUTE, refreshAheadFraction: 1 }],
    ['refresh ahead at 75 %', { refreshSkewMs: 5 * MINUTE, refreshAheadFraction: 0.75 }],
    ['no skew, refresh ahead at 50 %', { refreshSkewMs: 0, refreshAheadFraction: 0.5 }],
    ['skew longer than the lifetime', { refreshSkewMs: 90 * MINUTE, refreshAheadFraction: 0.9 }],
  ])('%s', (_name, policy) => {
    const isFresh = freshTest(policy);
    const disagreements = moments.filter(
      (now) => isFresh(record, now) !== (freshnessOf(record, now, policy) === 'fresh'),
    );
    expect(disagreements).toEqual([]);
    // Both answers occur, so the comparison means something.
    const answers = new Set(moments.map((now) => isFresh(record, now)));
    expect(answers.has(false)).toBe(true);
    if (policy.refreshSkewMs < 60 * MINUTE) expect(answers.has(true)).toBe(true);
  });
});
