// Starts and stops the harness app processes (bench/apps/harness-app.ts) the refresh-storm, entry,
// faults and invalidation sections load, each its own
// Node process on a free loopback port, as a game backend runs behind a load balancer.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** Which app a process runs; see apps/harness-app.ts. */
export type BenchAppKind = 'baseline' | 'package' | 'naive' | 'server-side';

/** A running app process. */
export interface BenchApp {
  kind: BenchAppKind;
  port: number;
  child: ChildProcess;
}

const APP_FILE = join(__dirname, '..', 'apps', 'harness-app.ts');
/** The package runs from its build (dist/), as `npm install` gives it (built-package.ts). */
const BUILT_PACKAGE = join(__dirname, 'built-package.ts');
const START_TIMEOUT_MS = 60_000;
/** What an app process is told through its environment (see apps/harness-app.ts). */
export interface BenchAppEnv {
  REDIS_URL: string;
  /** `host:port,…`: a Redis Cluster found from these seed nodes (REDIS_URL then empty). */
  REDIS_CLUSTER_NODES?: string;
  SIM_URL: string;
  KEY_PREFIX: string;
  /** JSON of extra platformLogin() options for the package app. */
  BENCH_LOGIN_OPTIONS?: string;
  /** `'0'`: RedisTokenStore with `recordCache: false` (every record read from Redis). */
  BENCH_STORE_CACHE?: '0';
  /** `'memory'`: RedisSessionStore instead of connect-redis. */
  BENCH_SESSION_STORE?: 'memory';
  /** `'1'`: the app times each request it answers 401 (read by /bench/times-401). */
  BENCH_TIME_401?: '1';
  /** `'node-redis'`: node-redis 6 (and connect-redis 10) in place of ioredis. */
  BENCH_REDIS_CLIENT?: 'node-redis';
}

/** Starts one app process. */
export function startBenchApp(kind: BenchAppKind, env: BenchAppEnv): Promise<BenchApp> {
  const child = spawn(process.execPath, ['-r', 'esbuild-register', '-r', BUILT_PACKAGE, APP_FILE], {
    env: {
      ...process.env,
      ...env,
      BENCH_APP: kind,
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the ${kind} app process did not start within 60 s`));
    }, START_TIMEOUT_MS);
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`the ${kind} app process exited with ${code} before listening`));
    };
    child.once('exit', onExit);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve({ kind, port: Number(match[1]), child });
      }
    });
  });
}

/** Starts `count` processes of one kind, one after the other (parallel starts thrash 2 cores). */
export async function startBenchApps(
  kind: BenchAppKind,
  count: number,
  env: BenchAppEnv,
): Promise<BenchApp[]> {
  const apps: BenchApp[] = [];
  try {
    for (let index = 0; index < count; index += 1) apps.push(await startBenchApp(kind, env));
  } catch (error) {
    await stopBenchApps(apps);
    throw error;
  }
  return apps;
}

/** Ends the processes with SIGTERM (SIGKILL after 10 s) and waits for them to exit. */
export async function stopBenchApps(apps: readonly BenchApp[]): Promise<void> {
  await Promise.all(
    apps.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}
