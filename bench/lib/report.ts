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
export interface SectionResult {
  figures: Figure[];
  markdown: string[];
}

/** A Markdown table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
}

/** ✅ / ❌ / (no target) for the summary. */
export const verdict = (met: boolean | undefined): string =>
  met === undefined ? '—' : met ? 'met' : '**missed**';
