// What the results were measured on: CPU, cores, memory, load, and the versions of Node, Redis and
// every package on the request path. Absolute figures mean little without it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, freemem, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

function versionOf(packageName: string): string {
  try {
    const file =
      packageName === '.' ? 'package.json' : join('node_modules', packageName, 'package.json');
    return (JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

function gitCommit(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT }).toString().trim();
  try {
    const dirty = git('status', '--porcelain', '--', 'lib') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' (lib/ with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** "0.52 / 0.61 / 0.70": the load average over 1, 5 and 15 minutes. */
export const loadAverage = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ');

/** Markdown lines describing the machine and the versions, for the top of RESULTS.md. */
export function describeMachine(): string[] {
  const cores = cpus();
  const gib = (value: number): string => `${(value / 1024 ** 3).toFixed(1)} GiB`;
  const packages = ['express', 'express-session', 'connect-redis', 'ioredis', 'zod']
    .map((name) => `${name} ${versionOf(name)}`)
    .join(', ');
  return [
    `- CPU: ${cores[0]?.model ?? 'unknown'}, ${cores.length} logical cores (Linux ${release()})`,
    `- Memory: ${gib(totalmem())} total, ${gib(freemem())} free at start; load average at start ${loadAverage()}`,
    `- Node ${process.version}, redis-server ${/v=(\S+)/.exec(execFileSync('redis-server', ['--version']).toString())?.[1]} (private, loopback, no persistence)`,
    `- express-platform-login ${versionOf('.')} at ${gitCommit()}, the app processes running its build (dist/, tsc)`,
    `- ${packages}`,
  ];
}
