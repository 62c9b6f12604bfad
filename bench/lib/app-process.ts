// Starts the processes a section loads, each a Node process of its own on a free loopback port
// (as a game backend runs behind a load balancer), with the CPU probe preloaded: the driver asks
// it over IPC how much CPU the process has used, so nothing is measured from inside a request.
// The harness app (apps/harness-app.ts) is one of them, started by kind.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const CPU_PROBE = join(__dirname, 'cpu-probe.js');
/** The package from its build, dist/, as `npm install` gives it (see built-package.ts). */
const BUILT_PACKAGE = join(__dirname, 'built-package.ts');
const START_TIMEOUT_MS = 60_000;

export interface AppProcess {
  name: string;
  port: number;
  /** What the process printed before it listened (the example prints its simulator's URL). */
  output: string;
  child: ChildProcess;
  /** CPU time (µs, user + system) the process has used so far. */
  cpuUs(): Promise<number>;
  stop(): Promise<void>;
}

export interface AppSpec {
  name: string;
  /** The script to run (relative to the repository): TypeScript with esbuild-register, `.js` by node alone. */
  script: string;
  env: Record<string, string>;
  /** How the process says which port it listens on: the first group of the first match. */
  listening: RegExp;
  /** Runs the package from dist/ for relative imports of lib/ too (the bench's own apps). */
  builtPackage?: boolean;
  /** More modules to preload (after esbuild-register and the built package), e.g. a bench-only switch. */
  preload?: string[];
  /**
   * Every line the process writes, stdout and stderr, from its start to its end; given, stderr is
   * not echoed to the driver's (the caller keeps what it wants).
   */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
}

/** Calls `onLine` for each complete line of a stream's chunks. */
function lineSplitter(onLine: (line: string) => void): (chunk: Buffer) => void {
  let rest = '';
  return (chunk) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) onLine(line);
  };
}

export function startApp(spec: AppSpec): Promise<AppProcess> {
  const preload = spec.script.endsWith('.js')
    ? []
    : [
        '-r',
        'esbuild-register',
        ...(spec.builtPackage ? ['-r', BUILT_PACKAGE] : []),
        ...(spec.preload ?? []).flatMap((file) => ['-r', file]),
      ];
  const child = spawn(process.execPath, [...preload, '-r', CPU_PROBE, join(ROOT, spec.script)], {
    cwd: ROOT,
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const cpuUs = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${spec.name}: no CPU answer`)), 10_000);
      child.once('message', (message: { cpuUs: number }) => {
        clearTimeout(timer);
        resolve(message.cpuUs);
      });
      child.send('cpu');
    });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    let output = '';
    let errors = '';
    let started = false;
    const { onLine } = spec;
    child.stderr!.on('data', (chunk: Buffer) => {
      // Kept for the message of a failed start only.
      if (!started) errors += chunk.toString();
      if (onLine === undefined) process.stderr.write(chunk);
    });
    if (onLine !== undefined) {
      child.stderr!.on(
        'data',
        lineSplitter((line) => onLine(line, 'stderr')),
      );
      child.stdout!.on(
        'data',
        lineSplitter((line) => onLine(line, 'stdout')),
      );
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${spec.name} did not start within 60 s`));
    }, START_TIMEOUT_MS);
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      const reason = /\w*Error: [^\n]*/.exec(errors)?.[0] ?? errors.trim().split('\n').pop();
      reject(new Error(`${spec.name} exited with ${code} before listening: ${reason ?? output}`));
    };
    child.once('exit', onExit);
    const watch = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = spec.listening.exec(output);
      if (match) {
        started = true;
        clearTimeout(timer);
        child.off('exit', onExit);
        child.stdout!.off('data', watch);
        // Read on and dropped, unless the caller takes the lines.
        if (onLine === undefined) child.stdout!.resume();
        resolve({ name: spec.name, port: Number(match[1]), output, child, cpuUs, stop });
      }
    };
    child.stdout!.on('data', watch);
  });
}

/** Which app a harness process runs (apps/harness-app.ts says what each env variable does). */
export type HarnessKind = 'baseline' | 'package' | 'naive' | 'server-side';

/** What a harness process is told: REDIS_URL (or REDIS_CLUSTER_NODES), SIM_URL, KEY_PREFIX, BENCH_*. */
export type HarnessEnv = Record<string, string | undefined> & {
  SIM_URL: string;
  KEY_PREFIX: string;
};

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

/** Ends the processes and waits for them to exit. */
export const stopApps = async (apps: readonly (AppProcess | undefined)[]): Promise<void> => {
  await Promise.all(apps.map((app) => app?.stop()));
};

/** Starts `count` harness processes one after the other (parallel starts thrash 2 cores). */
export async function startHarnessApps(
  kind: HarnessKind,
  count: number,
  env: HarnessEnv,
): Promise<AppProcess[]> {
  const apps: AppProcess[] = [];
  try {
    for (let index = 0; index < count; index += 1) apps.push(await startHarnessApp(kind, env));
  } catch (error) {
    await stopApps(apps);
    throw error;
  }
  return apps;
}
