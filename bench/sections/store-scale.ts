// Section "scale": RedisTokenStore read latency and Redis memory at 10k and 100k sessions, in
// the clear and encrypted, on a redis-server of its own (so its memory holds token records only).
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import { startRedisServer } from '../../test/helpers/redis-server';
import { inFlight } from '../lib/load';
import { table, type BenchContext, type Figure, type SectionResult } from '../lib/report';
import { bytes, count, fine, ms, summarize } from '../lib/stats';
import { readRecord, sampleRecord, writeRecord } from '../lib/records';

const SIZES = [10_000, 100_000] as const;
/** Puts in flight while filling: enough to keep Redis busy without queueing seconds of commands. */
const FILL_WINDOW = 512;
const DAY_MS = 86_400_000;
/** Reads in flight for the throughput figure. */
const READ_CONCURRENCY = 64;

const sessionIdOf = (index: number): string =>
  `bench-session-${index.toString(36).padStart(6, '0')}`;

/** Writes records `from`…`to - 1` with store.put (compare-and-set on "no record yet"), FILL_WINDOW at a time. */
async function fill(store: RedisTokenStore, from: number, to: number): Promise<number> {
  const startedAt = performance.now();
  await inFlight(FILL_WINDOW, async (i) => {
    if (from + i >= to) return false;
    // Fresh tokens and a player of its own per record (one session per player, the common
    // case), so encryption, the player index and memory see distinct values.
    const options = { expectedVersion: null, ttlMs: 90 * DAY_MS };
    if (!(await writeRecord(store, sessionIdOf(from + i), sampleRecord(), options)))
      throw new Error(`record ${from + i} already existed`);
  });
  return ((to - from) / (performance.now() - startedAt)) * 1000;
}

/** One store under test: a mode, a size, and its own Redis database on the shared server. */
interface Subject {
  mode: 'plain' | 'encrypted';
  size: number;
  redis: Redis;
  store: RedisTokenStore;
  fillPerSecond: number;
  memoryBytes: number;
  samples: number[];
  reads: number;
  readMs: number;
}

const MODES = ['plain', 'encrypted'] as const;

/** Allocated memory without the clients' buffers, which a fill leaves large for a while. */
async function usedMemory(redis: Redis): Promise<number> {
  const stats = (await redis.call('MEMORY', 'STATS')) as unknown[];
  const field = (name: string): number => Number(stats[stats.indexOf(name) + 1]);
  return field('total.allocated') - field('clients.normal');
}

/** Sequential reads of random sessions, the subjects taking turns: a drift touches all alike. */
async function sampleLatencies(subjects: readonly Subject[], reads: number): Promise<void> {
  const pick = (subject: Subject): string => sessionIdOf(Math.floor(Math.random() * subject.size));
  // Warm-up: the first reads of a run pay for JIT compilation, not for the number of sessions.
  for (let index = 0; index < 2000; index += 1)
    for (const subject of subjects) await readRecord(subject.store, pick(subject));
  for (let index = 0; index < reads; index += 1) {
    for (let turn = 0; turn < subjects.length; turn += 1) {
      const subject = subjects[(index + turn) % subjects.length]!;
      const startedAt = performance.now();
      const record = await readRecord(subject.store, pick(subject));
      subject.samples.push(performance.now() - startedAt);
      if (record === undefined) throw new Error('a filled record did not read back');
    }
  }
}

/** Reads with READ_CONCURRENCY in flight for `durationMs`, added to the subject's totals. */
async function sampleThroughput(subject: Subject, durationMs: number): Promise<void> {
  const startedAt = performance.now();
  let reads = 0;
  await inFlight(READ_CONCURRENCY, async () => {
    if (performance.now() >= startedAt + durationMs) return false;
    await readRecord(subject.store, sessionIdOf(Math.floor(Math.random() * subject.size)));
    reads += 1;
  });
  subject.reads += reads;
  subject.readMs += performance.now() - startedAt;
}

export async function runScale(ctx: BenchContext): Promise<SectionResult> {
  const reads = ctx.quick ? 2000 : 10_000;
  const throughputMs = ctx.quick ? 1000 : 3000;
  const server = await startRedisServer();
  const key = { id: 'k1', key: randomBytes(32) };
  const subjects: Subject[] = [];
  try {
    // One database per subject: a lookup only sees its own database's table, and memory grows
    // by exactly what the fill added.
    for (const mode of MODES) {
      for (const size of SIZES) {
        const redis = new Redis(server.url, { maxRetriesPerRequest: 1, db: subjects.length });
        // Every read a GET: the record cache (on by default, 10,000 entries) would serve the
        // whole 10k row from memory and none of the 100k row.
        const store = new RedisTokenStore({
          redis,
          prefix: 'sc:',
          recordCache: false,
          ...(mode === 'encrypted' ? { encryptionKeys: [key] } : {}),
        });
        const before = await usedMemory(redis);
        ctx.log(`scale: filling ${count(size)} ${mode} records`);
        const fillPerSecond = await fill(store, 0, size);
        const memoryBytes = (await usedMemory(redis)) - before;
        const measured = { fillPerSecond, memoryBytes, samples: [], reads: 0, readMs: 0 };
        subjects.push({ mode, size, redis, store, ...measured });
      }
    }
    ctx.log(`scale: ${count(reads)} sequential reads from each store, interleaved`);
    await sampleLatencies(subjects, reads);
    for (const subject of [...subjects, ...[...subjects].reverse()])
      await sampleThroughput(subject, throughputMs / 2);
  } finally {
    for (const subject of subjects) subject.redis.disconnect();
    await server.stop();
  }
  const points = subjects.map((subject) => ({
    ...subject,
    latency: summarize(subject.samples),
    readsPerSecond: (subject.reads / subject.readMs) * 1000,
  }));
  const at = (mode: Subject['mode'], size: number) =>
    points.find((p) => p.mode === mode && p.size === size)!;
  const [small, large] = SIZES;
  const figures: Figure[] = MODES.map((mode) => {
    const [a, b] = [at(mode, small), at(mode, large)];
    return {
      name: `store-scale: read at 100k ÷ at 10k sessions, ${mode}: p50, p99, reads/s`,
      measured: `${ms(b.latency.p50 / a.latency.p50)}, ${ms(b.latency.p99 / a.latency.p99)}, ${ms(b.readsPerSecond / a.readsPerSecond)} (p50 ${fine(a.latency.p50)} → ${fine(b.latency.p50)} ms)`,
      target: 'reported (a GET does not depend on the keys held; ≈ 1.0)',
    };
  });
  const perRecord = (mode: Subject['mode']): number => at(mode, large).memoryBytes / large;
  figures.push({
    name: 'store-scale: Redis memory per session, plain / encrypted (at 100k; record, expiry, player index)',
    measured: `${bytes(perRecord('plain'))} / ${bytes(perRecord('encrypted'))}`,
    target: 'reported',
  });
  const markdown = [
    '## store-scale: store reads and Redis memory at 10k and 100k sessions',
    '',
    `A redis-server of its own, one database per row, filled through \`RedisTokenStore.put\` (${FILL_WINDOW} puts in flight); latency: ${count(reads)} sequential reads of random sessions per row, the rows taking turns; throughput: ${READ_CONCURRENCY} reads in flight, ${throughputMs / 1000} s per row; memory: MEMORY STATS without the client buffers, after the fill minus before (bench/README.md).`,
    '',
    ...table(
      `records | mode | fill puts/s | memory added | per session | read p50 ms | read p99 ms | reads/s (${READ_CONCURRENCY} in flight)`,
      points.map((point) => [
        count(point.size),
        point.mode,
        count(point.fillPerSecond),
        bytes(point.memoryBytes),
        bytes(point.memoryBytes / point.size),
        fine(point.latency.p50),
        fine(point.latency.p99),
        count(point.readsPerSecond),
      ]),
    ),
  ];
  return { figures, markdown };
}
