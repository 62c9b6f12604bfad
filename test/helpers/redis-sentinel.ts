// Starts a Redis Sentinel (one sentinel watching one private master) on loopback for tests.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './free-port';
import { startRedisServer, waitForPort, type TestRedisServer } from './redis-server';

export const SENTINEL_MASTER_NAME = 'epl-master';
const HOST = '127.0.0.1';

/** A running master and the sentinel that watches it. */
export interface TestRedisSentinel {
  master: TestRedisServer;
  /** Sentinels for `new Redis({ sentinels, name: SENTINEL_MASTER_NAME })`. */
  sentinels: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/** A sentinel process on loopback, its config file in a directory of its own. */
export interface SentinelProcess {
  port: number;
  stop(): Promise<void>;
}

/** Starts a sentinel on `port` with the config `lines`; resolves once it listens. */
export async function startSentinel(port: number, lines: string[]): Promise<SentinelProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'epl-sentinel-'));
  const config = join(dir, 'sentinel.conf');
  // Sentinel rewrites its config file, so it must be a file of its own.
  writeFileSync(config, [`port ${port}`, `bind ${HOST}`, `dir ${dir}`, ...lines].join('\n') + '\n');
  const child = spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore' });
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, 10_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, stop };
}

export async function startRedisSentinel(): Promise<TestRedisSentinel> {
  const master = await startRedisServer();
  const port = await freePort();
  const sentinel = await startSentinel(port, [
    `sentinel monitor ${SENTINEL_MASTER_NAME} 127.0.0.1 ${master.port} 1`,
    `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} 5000`,
  ]).catch(async (error: unknown) => {
    await master.stop();
    throw error;
  });
  const stop = async (): Promise<void> => {
    await sentinel.stop();
    await master.stop();
  };
  try {
    // Ready once the sentinel names the master it watches.
    const probe = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
    try {
      for (let attempt = 0; attempt < 100; attempt += 1) {
        const address = (await probe.call(
          'SENTINEL',
          'get-master-addr-by-name',
          SENTINEL_MASTER_NAME,
        )) as string[] | null;
        if (address?.[1] === String(master.port)) break;
        await sleep(50);
      }
    } finally {
      probe.disconnect();
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { master, sentinels: [{ host: '127.0.0.1', port }], stop };
}
