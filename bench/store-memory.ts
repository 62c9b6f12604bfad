// Benchmark (not a test): Redis memory per token record, in the clear and encrypted, and the read
// latency a request pays in RedisTokenStore.get. Starts its own redis-server on loopback.
// Run: node -r esbuild-register bench/store-memory.ts
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { hashSessionId } from '../lib/core/hash';
import { RedisTokenStore } from '../lib/stores/redis-store';
import type { TokenRecord } from '../lib/core/token-record';
import { startRedisServer } from '../test/helpers/redis-server';
import { readRecord, writeRecord } from './lib/records';

const READS = 2000;
const WARM_UP_READS = 200;
const PREFIX = 'epl:';

function record(tokenLength: number): TokenRecord {
  const now = Date.now();
  const token = (): string => randomBytes(tokenLength).toString('base64url').slice(0, tokenLength);
  return {
    accessToken: token(),
    refreshToken: token(),
    accessExpiresAt: now + 7_200_000,
    refreshExpiresAt: now + 90 * 86_400_000,
    openId: randomBytes(16).toString('hex'),
    unionId: randomBytes(16).toString('hex'),
    scope: ['user_info'],
    version: 1,
    obtainedAt: now,
  };
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function readLatency(read: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let index = 0; index < WARM_UP_READS; index += 1) await read();
  const samples: number[] = [];
  for (let index = 0; index < READS; index += 1) {
    const started = performance.now();
    await read();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url, { maxRetriesPerRequest: 1, commandTimeout: 1000 });
  const key = { id: 'k1', key: randomBytes(32) };
  const plain = new RedisTokenStore({ redis, prefix: PREFIX });
  const encrypted = new RedisTokenStore({ redis, prefix: PREFIX, encryptionKeys: [key] });
  const usage = async (redisKey: string): Promise<number> =>
    Number(await redis.call('MEMORY', 'USAGE', redisKey, 'SAMPLES', '0'));
  const rows: string[] = [];
  try {
    for (const tokenLength of [43, 128]) {
      const sample = record(tokenLength);
      const plainId = `plain-${tokenLength}`;
      const sealedId = `sealed-${tokenLength}`;
      const ttl = { expectedVersion: null, ttlMs: 90 * 86_400_000 };
      await writeRecord(plain, plainId, sample, ttl);
      await writeRecord(encrypted, sealedId, sample, ttl);
      const sealedKey = `${PREFIX}{${hashSessionId(sealedId)}}:t`;
      const sealedValue = (await redis.getBuffer(sealedKey))!;
      // The alternative layout, for comparison: a hash with the version and the payload apart.
      const hashKey = `${PREFIX}{${hashSessionId(`hash-${tokenLength}`)}}:t`;
      await redis.hset(hashKey, 'v', '1', 'd', sealedValue.subarray(2));
      await redis.pexpire(hashKey, ttl.ttlMs);
      rows.push(
        `| ${tokenLength}-char tokens | ${await usage(`${PREFIX}{${hashSessionId(plainId)}}:t`)} | ` +
          `${await usage(sealedKey)} (value ${sealedValue.length} B) | ${await usage(hashKey)} |`,
      );
    }
    const sessionId = 'latency';
    await writeRecord(plain, sessionId, record(43), { expectedVersion: null, ttlMs: 600_000 });
    await writeRecord(encrypted, `${sessionId}-sealed`, record(43), {
      expectedVersion: null,
      ttlMs: 600_000,
    });
    const rawKey = `${PREFIX}{${hashSessionId(sessionId)}}:t`;
    const raw = await readLatency(() => redis.getBuffer(rawKey));
    const plainRead = await readLatency(() => readRecord(plain, sessionId));
    const sealedRead = await readLatency(() => readRecord(encrypted, `${sessionId}-sealed`));
    const ms = (value: number): string => value.toFixed(3);
    const version = execFileSync('redis-server', ['--version']).toString().split(' ')[2];
    console.log(
      `redis-server ${version}, Node ${process.version}, ${READS} sequential reads each\n`,
    );
    console.log(
      '| record | MEMORY USAGE plain (B) | encrypted (B) | encrypted as hash {v,d} (B) |',
    );
    console.log('|---|---|---|---|');
    for (const row of rows) console.log(row);
    console.log('\n| read | p50 (ms) | p99 (ms) |');
    console.log('|---|---|---|');
    console.log(`| raw GET (ioredis, baseline) | ${ms(raw.p50)} | ${ms(raw.p99)} |`);
    console.log(`| RedisTokenStore.get, plain | ${ms(plainRead.p50)} | ${ms(plainRead.p99)} |`);
    console.log(
      `| RedisTokenStore.get, encrypted | ${ms(sealedRead.p50)} | ${ms(sealedRead.p99)} |`,
    );
  } finally {
    await redis.quit();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
