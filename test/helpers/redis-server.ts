// Starts a private redis-server for tests on a free loopback port, with no persistence.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { freePort } from './free-port';

export const REDIS_MISSING_MESSAGE =
  'The integration tests need a redis-server binary on PATH (or REDIS_URL pointing at a running ' +
  'Redis). On Debian/Ubuntu: `sudo apt-get update && sudo apt-get install -y redis-server`; on macOS: ' +
  '`brew install redis`.';

/** A running test redis-server. */
export interface TestRedisServer {
  port: number;
  url: string;
  pid: number;
  /** Freezes the server (SIGSTOP): connections stay open but nothing is answered. */
  pause(): void;
  /** Thaws a paused server (SIGCONT). */
  resume(): void;
  stop(): Promise<void>;
  /** Kills the server (SIGKILL), as a crash would, and resolves once it has exited. */
  kill(): Promise<void>;
}

/** Where a server runs, for a test that restarts one where another was. */
export interface RedisServerPlacement {
  /** Listen on this port (e.g. the port of a server that was stopped). Defaults to a free port. */
  port?: number;
  /**
   * Data folder, kept on stop so a restart with `--appendonly yes` finds the data again. Defaults
   * to a fresh temporary folder, removed when the server exits.
   */
  dir?: string;
}

export function redisServerAvailable(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return probe.status === 0;
}

export function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.end();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`redis-server did not listen on port ${port}`));
        else setTimeout(attempt, 25);
      });
    };
    attempt();
  });
}

/** Starts `redis-server` with `extraArgs` (e.g. `['--cluster-enabled', 'yes']`). */
export async function startRedisServer(
  extraArgs: string[] = [],
  placement: RedisServerPlacement = {},
): Promise<TestRedisServer> {
  if (!redisServerAvailable()) throw new Error(REDIS_MISSING_MESSAGE);
  const port = placement.port ?? (await freePort());
  const dir = placement.dir ?? mkdtempSync(join(tmpdir(), 'epl-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      ...extraArgs,
    ],
    { stdio: 'ignore' },
  );
  // A folder of its own is removed once the server exits, however it ended (stop, kill or crash).
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      if (placement.dir === undefined) rmSync(dir, { recursive: true, force: true });
      resolve();
    }),
  );
  await waitForPort(port, 10_000);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid!,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        await exited;
      }
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
