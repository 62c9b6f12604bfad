// The README's quick start as a test runs it: its code block (after `<!-- quick-start -->`), its
// environment table, and the code started as a real process from a scratch folder inside the
// repository (so it resolves express, Redis clients… and the built package as a newcomer's would).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { START_DEADLINE_MS } from './on-sources';

const root = join(__dirname, '..', '..');

/** The TypeScript block that follows the `<!-- quick-start -->` marker of README.md. */
export function quickStartCode(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const match = /<!-- quick-start -->\s*```ts\n([\s\S]*?)\n```/.exec(readme);
  if (!match) throw new Error('README.md has no ```ts block after <!-- quick-start -->');
  return match[1]!;
}

/** The quick start, running: its URL as it printed it, and how to stop it. */
export interface RunningQuickStart {
  url: string;
  output(): string;
  close(): Promise<void>;
}

/**
 * Writes the quick start to a scratch folder and starts it with `env` (on top of this process's),
 * resolving once it prints its URL; `onOutput` sees the output as it grows. Needs the built package
 * (dist/).
 */
export async function startQuickStart(
  env: Record<string, string>,
  onOutput: (output: string) => void = () => undefined,
): Promise<RunningQuickStart> {
  if (!existsSync(join(root, 'dist', 'index.d.ts'))) {
    throw new Error('dist/ is missing: run `npm run build` first (`npm test` builds first).');
  }
  const scratch = join(root, '.tmp', `quick-start-${process.pid}-${Date.now()}`);
  mkdirSync(scratch, { recursive: true });
  writeFileSync(join(scratch, 'server.ts'), quickStartCode());
  // The quick start is an ES module (top-level await), run by tsx as the README says.
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ type: 'module' }));
  const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  const child: ChildProcess = spawn(process.execPath, [tsx, 'server.ts'], {
    cwd: scratch,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`not started in ${START_DEADLINE_MS / 1000} s:\n${output}`)),
        START_DEADLINE_MS,
      );
      const collect = (chunk: Buffer): void => {
        output += chunk.toString();
        onOutput(output);
        const started = /Game on (http:\/\/localhost:\d+)\//.exec(output);
        if (started) {
          clearTimeout(timer);
          resolve(started[1]!);
        }
      };
      child.stdout!.on('data', collect);
      child.stderr!.on('data', collect);
      child.once('exit', (status) => {
        clearTimeout(timer);
        reject(new Error(`the quick start exited with ${status}:\n${output}`));
      });
    });
    return { url, output: () => output, close };
  } catch (error) {
    await close();
    throw error;
  }
}
