// Benchmark (not a test): what a record-cache miss costs the app process, by the form of its read.
// A miss needs the record and its time to live (so the copy goes when Redis expires the key):
// before, a GET and a PTTL sent side by side; now, one script (READ_WITH_TTL) answering both; beside
// them a GET alone, what a store without the cache sends. Starts its own redis-server on loopback.
// Run: node -r esbuild-register bench/miss-read.ts
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { READ_WITH_TTL } from '../lib/stores/scripts';
import { startRedisServer } from '../test/helpers/redis-server';
import { summarize } from './lib/stats';

const READS = 20_000;
const ROUNDS = 3;
const KEY = 'epl:{miss-read}:t';

async function main(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    await redis.set(KEY, `1|${'x'.repeat(300)}`, 'PX', 3_600_000);
    await redis.script('LOAD', READ_WITH_TTL.source);
    const forms: Record<string, () => Promise<unknown>> = {
      'GET and PTTL side by side (before)': () =>
        Promise.all([redis.getBuffer(KEY), redis.pttl(KEY)]),
      'one script, READ_WITH_TTL (now)': () =>
        redis.callBuffer('EVALSHA', READ_WITH_TTL.sha, 1, KEY),
      'GET alone (no cache)': () => redis.getBuffer(KEY),
    };
    const cpu = new Map<string, number[]>();
    const latency = new Map<string, number[]>();
    // Rounds interleave the forms, so that the machine's drift falls on all of them alike.
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, read] of Object.entries(forms)) {
        for (let index = 0; index < 1000; index += 1) await read(); // warm-up
        const times: number[] = [];
        const before = process.cpuUsage();
        for (let index = 0; index < READS; index += 1) {
          const started = performance.now();
          await read();
          times.push(performance.now() - started);
        }
        const used = process.cpuUsage(before);
        cpu.set(name, [...(cpu.get(name) ?? []), (used.user + used.system) / READS]);
        latency.set(name, [...(latency.get(name) ?? []), ...times]);
      }
    }
    console.log(
      `${READS.toLocaleString('en-US')} sequential reads per form and round, ${ROUNDS} rounds`,
    );
    console.log('| read | process CPU per read, µs (each round) | p50 ms | p99 ms |');
    console.log('| --- | --- | --- | --- |');
    for (const name of Object.keys(forms)) {
      const summary = summarize(latency.get(name)!);
      const rounds = cpu
        .get(name)!
        .map((us) => us.toFixed(1))
        .join(' / ');
      console.log(
        `| ${name} | ${rounds} | ${summary.p50.toFixed(3)} | ${summary.p99.toFixed(3)} |`,
      );
    }
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
