// The load generator: autocannon in a process of its own, as anyone checking these figures from
// outside would run it (`autocannon -c 32 -d 5 -H cookie=… http://127.0.0.1:<port>/api/me`). It
// costs a fraction of what a node:http client costs per request, and it shares no event loop
// with the driver, the simulator or the app.
import { spawn } from 'node:child_process';

const AUTOCANNON = require.resolve('autocannon/autocannon.js');

export interface CannonResult {
  /** 2xx answers. */
  ok: number;
  /** Answers other than 2xx, and errors/timeouts. */
  failed: number;
  /** 2xx answers per second over the window. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

export interface CannonOptions {
  port: number;
  path: string;
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
}

export function cannon(options: CannonOptions): Promise<CannonResult> {
  const args = ['-j', '-c', String(options.connections), '-d', String(options.seconds)];
  for (const [name, value] of Object.entries(options.headers ?? {}))
    args.push('-H', `${name}=${value}`);
  args.push(`http://127.0.0.1:${options.port}${options.path}`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AUTOCANNON, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => {
      try {
        const report = JSON.parse(out) as {
          requests: { total: number };
          non2xx: number;
          errors: number;
          timeouts: number;
          duration: number;
          latency: { p50: number; p99: number };
          '2xx': number;
        };
        resolve({
          ok: report['2xx'],
          failed: report.non2xx + report.errors + report.timeouts,
          rps: report['2xx'] / report.duration,
          p50Ms: report.latency.p50,
          p99Ms: report.latency.p99,
        });
      } catch {
        reject(new Error(`autocannon exited with ${code}: ${err.slice(-500)}`));
      }
    });
  });
}
