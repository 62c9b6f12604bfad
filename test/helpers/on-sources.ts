// How a test starts a program of the repository as a Node process of its own: TypeScript through
// cached-typescript.cjs, and source-aliases.ts so the package's names resolve to lib/ sources, as
// in the test (never a stale or missing dist/ build).
import {
  spawn,
  type ChildProcess,
  type ChildProcessWithoutNullStreams,
  type SpawnOptions,
} from 'node:child_process';
import { join } from 'node:path';

/** Node's options for a program on the sources. */
export const ON_SOURCES = [
  '-r',
  join(__dirname, 'cached-typescript.cjs'),
  '-r',
  join(__dirname, '../../scripts/source-aliases.ts'),
];

/**
 * How long a program on the sources may take to start: nine starting at once beside a CPU-bound
 * process took over 20 s. Past this, a start is broken, not slow.
 */
export const START_DEADLINE_MS = 45_000;

/** Starts `script` (a path node resolves from `options.cwd`) on the sources, its output piped. */
export const spawnOnSources = (script: string, options: SpawnOptions) =>
  spawn(process.execPath, [...ON_SOURCES, script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  }) as ChildProcessWithoutNullStreams;

/** Kills the processes (SIGKILL) and resolves once every one has exited. */
export async function stopProcesses(processes: readonly { child: ChildProcess }[]): Promise<void> {
  await Promise.all(
    processes.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/**
 * Resolves the port `child` prints ("listening <port>") once started. Past START_DEADLINE_MS it kills
 * the child before rejecting: a start left running keeps its test worker's output open, and the run
 * never ends. `detail` is added to a failure's message (the child's output, say).
 */
export function listeningPort(
  child: ChildProcess,
  what: string,
  detail: () => string = () => '',
): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    const fail = (why: string): void => {
      clearTimeout(timer);
      reject(new Error(`${what} ${why}${detail()}`));
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(`did not start in ${START_DEADLINE_MS} ms`);
    }, START_DEADLINE_MS);
    const exited = (code: number | null): void => fail(`exited with ${code}`);
    const ready = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match === null) return;
      clearTimeout(timer);
      child.stdout!.off('data', ready);
      child.off('exit', exited);
      resolve(Number(match[1]));
    };
    child.stdout!.on('data', ready);
    child.once('exit', exited);
  });
}
