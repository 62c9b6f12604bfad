// The shapes the benchmark sections hand to bench/run.ts, and the Markdown table helper they share.
import type { Redis } from 'ioredis';
import type { PlatformSimulator } from '../../lib/simulator';

/** What every section gets from the driver. */
export interface BenchContext {
  /** The private redis-server the app processes share. */
  redisUrl: string;
  /** A client of it for the driver itself (rewriting records and sessions). */
  redis: Redis;
  /** Stops (SIGSTOP) and resumes (SIGCONT) the redis-server: a stall, for the fault run. */
  redisServer: { pause(): void; resume(): void };
  /** The simulated platform, in the driver's process (call counts, rotation, clock). */
  sim: PlatformSimulator;
  /** BENCH_QUICK=1: shorter rounds, for trying the harness; not for recorded figures. */
  quick: boolean;
  /** Progress line on stderr. */
  log: (line: string) => void;
}

/** One figure beside its target, for the summary table. */
export interface Figure {
  name: string;
  measured: string;
  target: string;
  /** `undefined`: reported without a target. */
  met?: boolean;
}

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
