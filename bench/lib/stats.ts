// Percentile math and number formatting for the benchmarks. Percentiles are nearest-rank over the
// full sample (no histogram buckets), so p99 is an observed latency, not an interpolation.

/** A latency sample reduced to what the results report. */
export type LatencySummary = { count: number; p50: number; p90: number; p99: number; max: number };

/** Nearest-rank percentile of an ascending array (`p` in 0–100); NaN for an empty array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

/** Summarises latencies in milliseconds (the input is not modified). */
export function summarize(latenciesMs: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(latenciesMs).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
  };
}

/** The `p`th percentile of numbers in any order; the median by default. */
export const median = (values: readonly number[], p = 50): number =>
  percentile(Float64Array.from(values).sort(), p);

/** Milliseconds or a ratio with two decimals; `fine`: three, for sub-millisecond figures and ratios held to a target (0.846 is not 0.85). */
export const ms = (value: number, digits = 2): string =>
  Number.isFinite(value) ? value.toFixed(digits) : '–';
export const fine = (value: number): string => ms(value, 3);

export const count = (value: number): string => Math.round(value).toLocaleString('en-US');

/** Bytes as a whole number, or as MiB with one decimal from 1 MiB up. */
export const bytes = (value: number): string =>
  value >= 1024 * 1024 ? `${(value / 1024 / 1024).toFixed(1)} MiB` : `${Math.round(value)} B`;
