// Starts `npm run example`'s server.ts in a process of its own, from the sources.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { spawnOnSources, START_DEADLINE_MS } from './on-sources';
import { waitUntil } from './wait-until';

const ROOT = join(__dirname, '../..');

export interface SpawnedExample {
  url: string;
  child: ChildProcess;
}

/** Starts the example with `env`; resolves its URL (no trailing slash) once it is ready. */
export async function spawnExample(env: Record<string, string>): Promise<SpawnedExample> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  const child = spawnOnSources('example-app/server.ts', { cwd: ROOT, env: childEnv });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    await waitUntil(
      () => {
        if (child.exitCode !== null) throw new Error(`the example exited at start:\n${output}`);
        return /Example game backend: (\S+)/.test(output);
      },
      'the spawned example to start',
      START_DEADLINE_MS,
    );
    const url = /Example game backend: (\S+)/.exec(output)![1]!.replace(/\/$/, '');
    await waitUntil(
      async () => (await fetch(`${url}/healthz`)).ok,
      'the spawned example to be ready',
    );
    return { url, child };
  } catch (error) {
    child.kill('SIGKILL'); // not left running past its test
    throw error;
  }
}

/** Kills a spawned example and waits for its exit. */
export async function stopExample(example: SpawnedExample | undefined): Promise<void> {
  if (example === undefined || example.child.exitCode !== null) return;
  example.child.kill('SIGKILL');
  await once(example.child, 'exit');
}
