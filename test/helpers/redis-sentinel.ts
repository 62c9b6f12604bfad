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

/** A running master and the sentinel that watches it. */
export interface TestRedisSentinel {
  master: TestRedisServer;
  /** Sentinels for `new Redis({ sentinels, name: SENTINEL_MASTER_NAME })`. */
  sentinels: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
}

export async function startRedisSentinel(): Promise<TestRedisSentinel> {
  const master = await startRedisServer();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'epl-sentinel-'));
  const config = join(dir, 'sentinel.conf');
  // Sentinel rewrites its config file, so it must be a file of its own.
  writeFileSync(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${SENTINEL_MASTER_NAME} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} 5000`,
    ].join('\n') + '\n',
  );
  const child = spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore' });
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
    await master.stop();
  };
  try {
    await waitForPort(port, 10_000);
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
