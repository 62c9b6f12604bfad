// How a test starts a program of the repository as a Node process of its own: TypeScript through
// esbuild-register, and source-aliases.ts so the package's names resolve to lib/ sources, as in
// the test (never a stale or missing dist/ build).
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
  'esbuild-register',
  '-r',
  join(__dirname, '../../scripts/source-aliases.ts'),
];

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
