// The shapes the benchmark sections hand to bench/run.ts, and the Markdown table helper they share.
import type { Redis } from 'ioredis';
import type { PlatformSimulator } from '../../lib/simulator';

/**
 * What every section gets from the driver: the private redis-server the app processes share (its
 * URL, a client of it for the driver, SIGSTOP/SIGCONT for a stall), the simulated platform in the
 * driver's process, BENCH_QUICK=1 (shorter rounds: not for recorded figures), a progress line.
 */
export interface BenchContext {
  redisUrl: string;
  redis: Redis;
  redisServer: { pause(): void; resume(): void };
  sim: PlatformSimulator;
  quick: boolean;
  log: (line: string) => void;
}

/** One figure beside its target, for the summary table (`met` undefined: reported). */
export type Figure = { name: string; measured: string; target: string; met?: boolean };

/** What a section produced: summary figures and its own Markdown. */
export type SectionResult = { figures: Figure[]; markdown: string[] };

/** A Markdown table; a header given as one string is split at ` | `. */
export function table(header: string | readonly string[], rows: readonly (readonly string[])[]) {
  const names = typeof header === 'string' ? header.split(' | ') : header;
  return [
    `| ${names.join(' | ')} |`,
    `| ${names.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
}

export const verdict = (met: boolean | undefined): string =>
  met === undefined ? '—' : met ? 'met' : '**missed**';

/** How many of `items` fall under each key, in the order the keys first come. */
export function tally<T>(items: Iterable<T>, keyOf: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const key = keyOf(item);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export const tallyList = (counts: Map<string, number>): string =>
  [...counts].map(([key, n]) => `${key}: ${n}`).join(', ');
