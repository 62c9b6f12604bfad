// Starts the processes a section loads, each a Node process of its own on a free loopback port,
// with the CPU probe preloaded: nothing is measured from inside a request.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { BENCH_SESSION_SECRET } from './settings';

const ROOT = join(__dirname, '..', '..');
const CPU_PROBE = join(__dirname, 'cpu-probe.js');
const BUILT_PACKAGE = join(__dirname, 'built-package.ts');

/** A started app: `output`, what it printed before it listened; `cpuUs`, the CPU it has used (µs). */
export interface AppProcess {
  name: string;
  port: number;
  output: string;
  child: ChildProcess;
  cpuUs(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * `script`: relative to the repository, TypeScript through esbuild-register or `.js` by node alone;
 * `listening`: its first group is the port the process says it listens on; `builtPackage`: the
 * package from dist/ for relative imports of lib/ too; `preload`: more modules to preload after
 * those; `echo: false`: its stderr kept from the driver's once it listens (the failover's warnings).
 */
export interface AppSpec {
  name: string;
  script: string;
  env: Record<string, string>;
  listening: RegExp;
  builtPackage?: boolean;
  preload?: string[];
  echo?: boolean;
}

export function startApp(spec: AppSpec): Promise<AppProcess> {
  const preload = spec.script.endsWith('.js')
    ? []
    : ['esbuild-register', ...(spec.builtPackage ? [BUILT_PACKAGE] : []), ...(spec.preload ?? [])];
  const args = [...preload, CPU_PROBE].flatMap((file) => ['-r', file]);
  const child = spawn(process.execPath, [...args, join(ROOT, spec.script)], {
    cwd: ROOT,
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const cpuUs = async (): Promise<number> => {
    child.send('cpu');
    const signal = AbortSignal.timeout(10_000);
    const [message] = (await once(child, 'message', { signal })) as [{ cpuUs: number }];
    return message.cpuUs;
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.kill('SIGTERM');
    await once(child, 'exit');
    clearTimeout(kill);
  };
  return new Promise((resolve, reject) => {
    let output = '';
    let errors = '';
    let started = false;
    child.stderr!.on('data', (chunk: Buffer) => {
      // Kept for the message of a failed start only.
      if (!started) errors += chunk.toString();
      if (!started || spec.echo !== false) process.stderr.write(chunk);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${spec.name} did not start within 60 s`));
    }, 60_000);
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      const reason = /\w*Error: [^\n]*/.exec(errors)?.[0] ?? errors.trim().split('\n').pop();
      reject(new Error(`${spec.name} exited with ${code} before listening: ${reason ?? output}`));
    };
    child.once('exit', onExit);
    const watch = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = spec.listening.exec(output);
      if (!match) return;
      started = true;
      clearTimeout(timer);
      child.off('exit', onExit);
      // Read on and dropped.
      child.stdout!.off('data', watch).resume();
      resolve({ name: spec.name, port: Number(match[1]), output, child, cpuUs, stop });
    };
    child.stdout!.on('data', watch);
  });
}

/** Addresses as the apps' REDIS_CLUSTER_NODES and REDIS_SENTINELS take them: `host:port,…`. */
export const hostList = (addresses: readonly { host: string; port: number }[]): string =>
  addresses.map((a) => `${a.host}:${a.port}`).join(',');

/** example-app/server.ts as `npm run example` starts it, on a free port, with `env` added. */
export const startExample = (
  name: string,
  env: Record<string, string>,
  more: Partial<AppSpec> = {},
): Promise<AppProcess> =>
  startApp({
    name,
    script: 'example-app/server.ts',
    env: { PORT: '0', SESSION_SECRET: BENCH_SESSION_SECRET, ...env },
    listening: /Example game backend: http:\/\/[^:]+:(\d+)/,
    ...more,
  });

/** Which app a harness process runs (apps/harness-app.ts says what each env variable does). */
export type HarnessKind = 'baseline' | 'package' | 'naive' | 'server-side';

/** What a harness process is told: REDIS_URL (or REDIS_CLUSTER_NODES), SIM_URL, KEY_PREFIX, BENCH_*. */
export type HarnessEnv = Record<string, string | undefined> &
  Record<'SIM_URL' | 'KEY_PREFIX', string>;

export const startHarnessApp = (kind: HarnessKind, env: HarnessEnv): Promise<AppProcess> =>
  startApp({
    name: `the ${kind} app`,
    script: 'bench/apps/harness-app.ts',
    env: { ...env, BENCH_APP: kind, NODE_ENV: 'production' } as Record<string, string>,
    listening: /listening (\d+)/,
    builtPackage: true,
  });

/** What each harness process reports at `path` (`/bench/refresh-durations`, `/bench/times-401`) since the last ask, all together. */
export async function harnessReports(apps: readonly { port: number }[], path: string) {
  const reports = await Promise.all(
    apps.map(async ({ port }) => (await fetch(`http://127.0.0.1:${port}${path}`)).json()),
  );
  return (reports as number[][]).flat();
}

export const stopApps = async (apps: Iterable<AppProcess | undefined>): Promise<void> => {
  await Promise.all([...apps].map((app) => app?.stop()));
};

/** Starts an app per key one after the other (parallel starts thrash 2 cores); all or none. */
export async function startInTurn<K, P extends AppProcess>(
  keys: readonly K[],
  start: (key: K) => Promise<P>,
): Promise<Map<K, P>> {
  const apps = new Map<K, P>();
  try {
    for (const key of keys) apps.set(key, await start(key));
  } catch (error) {
    await stopApps(apps.values());
    throw error;
  }
  return apps;
}

export const startHarnessApps = async (kind: HarnessKind, count: number, env: HarnessEnv) => [
  ...(await startInTurn([...Array(count).keys()], () => startHarnessApp(kind, env))).values(),
];
