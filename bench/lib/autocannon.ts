// The load generator: autocannon in a process of its own, as anyone checking these figures from
// outside would run it; it shares no event loop with the driver, the simulator or the app.
import { spawn } from 'node:child_process';
import type { Target } from './load';

const AUTOCANNON = require.resolve('autocannon/autocannon.js');

/** `ok`: 2xx answers; `failed`: the others, errors and timeouts; `rps`: 2xx answers per second. */
export type CannonResult = Record<'ok' | 'failed' | 'rps' | 'p50Ms' | 'p99Ms', number>;

export function cannon(
  target: Target,
  connections: number,
  seconds: number,
): Promise<CannonResult> {
  const { port, path, headers } = target;
  const args = ['-j', '-c', String(connections), '-d', String(seconds)];
  for (const [name, value] of Object.entries(headers ?? {})) args.push('-H', `${name}=${value}`);
  const url = `http://127.0.0.1:${port}${path}`;
  const child = spawn(process.execPath, [AUTOCANNON, ...args, url], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [out, err] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => {
      try {
        const report = JSON.parse(out) as Record<'non2xx' | 'errors' | 'timeouts', number> & {
          duration: number;
          latency: { p50: number; p99: number };
          '2xx': number;
        };
        const { latency, duration } = report;
        const ok = report['2xx'];
        const failed = report.non2xx + report.errors + report.timeouts;
        resolve({ ok, failed, rps: ok / duration, p50Ms: latency.p50, p99Ms: latency.p99 });
      } catch {
        reject(new Error(`autocannon exited with ${code}: ${err.slice(-500)}`));
      }
    }),
  );
}
