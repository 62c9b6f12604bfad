// Starts N game backend processes (each running test/helpers/game-backend-program.ts) sharing one
// Redis, and stops them.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { listeningPort, spawnOnSources, stopProcesses } from './on-sources';

export interface AppProcess {
  port: number;
  url: string;
  child: ChildProcess;
}

export async function startAppProcess(env: Record<string, string>): Promise<AppProcess> {
  const child = spawnOnSources(join(__dirname, 'game-backend-program.ts'), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await listeningPort(child, 'app process');
  return { port, url: `http://127.0.0.1:${port}`, child };
}

export const stopAppProcesses = stopProcesses;
