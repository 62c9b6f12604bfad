// The figures of issue 15, before and after, on two real app processes (test/helpers/game-backend-program.ts)
// sharing a private redis-server: what each request waits under a hanging platform or an orphaned
// lock, platform calls and Retry-After under throttling, and the TTL of every key a login writes.
// `node -r esbuild-register bench/refresh-faults-figures.ts`; printed, not recorded.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisTokenStore } from '../lib';
import { hashSessionId } from '../lib/core/hash';
import { startSimulator } from '../lib/simulator';
import { startAppProcess, stopAppProcesses } from '../test/helpers/spawn-game-backends';
import { startRedisServer } from '../test/helpers/redis-server';
import { readRecord, writeRecord } from './lib/records';

const REDIRECT_URI = 'http://127.0.0.1:3999/platform/callback';
const PREFIX = 'fig:';

async function main(): Promise<void> {
  const server = await startRedisServer();
  const sim = await startSimulator();
  const redis = new Redis(server.url);
  const store = new RedisTokenStore({ redis, prefix: `${PREFIX}t:` });
  const env = { REDIS_URL: server.url, SIM_URL: sim.url, KEY_PREFIX: PREFIX };
  const apps = [await startAppProcess(env), await startAppProcess(env)];
  const enter = async (): Promise<{ cookie: string; sessionId: string }> => {
    const code = sim.issueCode({ redirectUri: REDIRECT_URI, openId: 'player-ada' });
    const res = await fetch(`${apps[0]!.url}/platform/callback?code=${code}`, {
      redirect: 'manual',
    });
    const cookie = res.headers
      .getSetCookie()
      .find((c) => c.startsWith('connect.sid='))!
      .split(';')[0]!;
    const id = /^s:(.+)\.[^.]+$/.exec(decodeURIComponent(cookie.slice('connect.sid='.length)))!;
    return { cookie, sessionId: id[1]! };
  };
  /** The access token has `ms` left (negative: expired). */
  const expiringIn = async (sessionId: string, ms: number): Promise<void> => {
    const record = (await readRecord(store, sessionId))!;
    const accessExpiresAt = Date.now() + ms;
    const next = {
      ...record,
      accessExpiresAt,
      obtainedAt: accessExpiresAt - 7_200_000,
      version: record.version + 1,
    };
    await writeRecord(store, sessionId, next, {
      expectedVersion: record.version,
      ttlMs: 3_600_000,
    });
  };
  const burst = (cookie: string, count: number): Promise<string[]> =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const started = performance.now();
        const res = await fetch(`${apps[i % 2]!.url}/api/token`, {
          headers: { cookie, accept: 'application/json' },
        });
        await res.text();
        const retryAfter = res.headers.get('retry-after');
        return `${res.status}${retryAfter ? ` Retry-After ${retryAfter}` : ''} in ${Math.round(performance.now() - started)} ms`;
      }),
    );
  const lockKey = (sessionId: string): string => `${PREFIX}t:{${hashSessionId(sessionId)}}:l`;
  try {
    const before = new Set(await redis.keys('*'));
    await enter();
    for (const key of await redis.keys('*')) {
      if (!before.has(key))
        console.log(`TTL after a login: ${key.slice(0, 16)}… ${await redis.ttl(key)} s`);
    }

    const hanging = await enter();
    await expiringIn(hanging.sessionId, 30_000);
    sim.injectFault({ kind: 'hang' }, { grant: 'refresh_token' });
    console.log(
      'hanging platform, 30 s left, 6 requests on 2 processes:',
      await burst(hanging.cookie, 6),
    );
    console.log('the next 4:', await burst(hanging.cookie, 4));
    sim.clearFaults();

    for (const [label, ms] of [
      ['30 s left', 30_000],
      ['expired', -1000],
    ] as const) {
      const orphaned = await enter();
      await expiringIn(orphaned.sessionId, ms);
      // A lock as the package leaves it when its holder dies (or a SET applied after a timeout).
      const lockTtlMs = Number(process.env.FIGURES_ORPHAN_LOCK_MS ?? 5000);
      await redis.set(lockKey(orphaned.sessionId), 'dead-owner', 'PX', lockTtlMs);
      console.log(`orphaned lock of ${lockTtlMs} ms, ${label}:`, await burst(orphaned.cookie, 6));
    }

    const throttled = await enter();
    await expiringIn(throttled.sessionId, -1000);
    sim.advanceClock(3 * 3600);
    sim.resetCalls();
    sim.injectFault(
      { kind: 'status', status: 429, retryAfterSeconds: 30 },
      { grant: 'refresh_token' },
    );
    console.log('429 Retry-After: 30, expired token:', await burst(throttled.cookie, 6));
    sim.clearFaults();
    await sleep(6000);
    console.log('6 s later (platform answering again):', await burst(throttled.cookie, 6));
    console.log('platform refresh calls across 2 processes:', sim.calls.refresh_token);
  } finally {
    await stopAppProcesses(apps);
    redis.disconnect();
    await sim.close();
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
