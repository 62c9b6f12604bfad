// Starts N game backend processes (each running test/helpers/game-backend-program.ts) sharing one
// Redis, and stops them.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { spawnOnSources, stopProcesses } from './on-sources';

export interface AppProcess {
  port: number;
  url: string;
  child: ChildProcess;
}

export function startAppProcess(env: Record<string, string>): Promise<AppProcess> {
  const child = spawnOnSources(join(__dirname, 'game-backend-program.ts'), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error('app process did not start in 20 s')), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        const port = Number(match[1]);
        resolve({ port, url: `http://127.0.0.1:${port}`, child });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`app process exited with ${code}`));
    });
  });
}

export const stopAppProcesses = stopProcesses;
