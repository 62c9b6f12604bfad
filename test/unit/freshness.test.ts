// The freshness rule: when a token is used as it is, renewed in the background, or renewed before
// the request goes on. The middleware's fast path (freshTest) asks the same rule.
import { freshTest, freshnessOf, type FreshnessPolicy } from '../../lib/core/freshness';
import { sampleRecord } from 'express-platform-login/testing';

const MINUTE = 60_000;
const obtainedAt = 1_000_000;
const record = sampleRecord(1, { obtainedAt, accessExpiresAt: obtainedAt + 60 * MINUTE });
const at = (minutes: number): number => obtainedAt + minutes * MINUTE;

test.each<[string, FreshnessPolicy, Array<[number, string]>]>([
  [
    'refresh ahead at 75 %, 5 minutes of skew',
    { refreshSkewMs: 5 * MINUTE, refreshAheadFraction: 0.75 },
    [
      [0, 'fresh'],
      [44.9, 'fresh'],
      [45, 'refresh-ahead'],
      [54.9, 'refresh-ahead'],
      [55, 'refresh-now'],
      [61, 'refresh-now'],
    ],
  ],
  [
    'no refresh ahead (fraction 1)',
    { refreshSkewMs: 5 * MINUTE, refreshAheadFraction: 1 },
    [
      [54.9, 'fresh'],
      [55, 'refresh-now'],
    ],
  ],
  [
    'skew longer than the lifetime',
    { refreshSkewMs: 90 * MINUTE, refreshAheadFraction: 0.9 },
    [[0, 'refresh-now']],
  ],
])('%s', (_name, policy, expected) => {
  const isFresh = freshTest(policy);
  for (const [minutes, freshness] of expected) {
    expect([minutes, freshnessOf(record, at(minutes), policy)]).toEqual([minutes, freshness]);
    expect([minutes, isFresh(record, at(minutes))]).toEqual([minutes, freshness === 'fresh']);
  }
});
