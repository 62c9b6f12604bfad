// Starts and stops the app processes the benchmarks load (bench/lib/bench-app.ts), each its own
// Node process on a free loopback port, as a game backend runs behind a load balancer.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Agent } from 'node:http';
import { join } from 'node:path';
import { send } from './load';

/** Which app a process runs; see bench-app.ts. */
export type BenchAppKind = 'baseline' | 'package' | 'example' | 'naive';

/** A running app process. */
export interface BenchApp {
  kind: BenchAppKind;
  port: number;
  child: ChildProcess;
}

const APP_FILE = join(__dirname, 'bench-app.ts');
/** The package runs from its build (dist/), by name (the example) and by path (bench-app.ts) alike. */
const BUILT_PACKAGE = join(__dirname, 'built-package.ts');
const START_TIMEOUT_MS = 60_000;
/**
 * The example's token encryption key, one per benchmark run: every example process of the run
 * reads the records the others wrote (a round's fresh processes serve the sessions entered before).
 */
const RUN_TOKEN_KEY = randomBytes(32).toString('base64');

/** What an app process is told through its environment (see bench-app.ts). */
export interface BenchAppEnv {
  REDIS_URL: string;
  SIM_URL: string;
  KEY_PREFIX: string;
  /** `'1'`: the ioredis client batches the commands of one tick into one write. */
  BENCH_AUTO_PIPELINING?: '1';
  /** `'1'`: the package app reads each record from Redis once, then from memory (diagnostic). */
  BENCH_RECORD_CACHE?: '1';
  /** JSON of extra platformLogin() options for the package app. */
  BENCH_LOGIN_OPTIONS?: string;
  /** `'0'`: RedisTokenStore with `recordCache: false` (every record read from Redis). */
  BENCH_STORE_CACHE?: '0';
  /** `'1'`: the app times each request it answers 401 (read by /bench/times-401). */
  BENCH_TIME_401?: '1';
  /** `'1'`: the package app times its own work per request (read by /bench/own-time). */
  BENCH_TIME_OWN?: '1';
  /** `'1'` (with BENCH_TIME_OWN): the hand-written floor (floor.ts) instead of the package's middleware. */
  BENCH_FLOOR?: '1';
}

/** CPU time (user + system, µs) the app process on `port` has used so far: its /bench/cpu. */
export async function cpuUsOf(agent: Agent, port: number): Promise<number> {
  const answer = await send(agent, { port, path: '/bench/cpu' }, true);
  return (JSON.parse(answer.body) as { us: number }).us;
}

/** Starts one app process. */
export function startBenchApp(kind: BenchAppKind, env: BenchAppEnv): Promise<BenchApp> {
  const child = spawn(process.execPath, ['-r', 'esbuild-register', '-r', BUILT_PACKAGE, APP_FILE], {
    env: {
      ...process.env,
      ...env,
      BENCH_APP: kind,
      BENCH_TOKEN_KEY: RUN_TOKEN_KEY,
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
