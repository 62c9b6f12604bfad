// What the sockets section needs beyond the socket test helpers: a memory probe inside each spawned
// socket backend (preloaded through NODE_OPTIONS, so the test program stays as the tests use it: it
// answers SIGUSR2 with `bench-memory {"rss":…,"heap":…}` on stdout, after a full GC); and what
// Redis ran between two readings of its command counters. This file is also preloaded into the
// backends, before anything else is set up: it imports no socket helper but its types.
import type { SocketProcess } from '../../test/helpers/spawn-socket-backends';
import { commandCounts, type InfoClient } from '../../test/helpers/command-counts';
import { waitUntil } from '../../test/helpers/wait-until';

if (process.env.BENCH_SOCKET_PROBE === '1') {
  process.on('SIGUSR2', () => {
    (globalThis as { gc?: () => void }).gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    console.log(`bench-memory ${JSON.stringify({ rss, heap: heapUsed })}`);
  });
}

/** The environment that puts the probe into a spawned backend (esbuild-register is already its -r). */
export const PROBE_ENV: Record<string, string> = {
  BENCH_SOCKET_PROBE: '1',
  NODE_OPTIONS: `--expose-gc --require esbuild-register --require ${__filename}`,
};

export type ProcessMemory = { rss: number; heap: number };

/** Asks the backend's probe for its memory (after a GC); rejects after 10 s. */
export async function memoryOf(backend: SocketProcess): Promise<ProcessMemory> {
  // Only what it prints from now on is read: its output keeps every log line of every socket.
  const from = backend.output().length;
  backend.child.kill('SIGUSR2');
  const line = () => /bench-memory (\{[^\n]*\})\n/.exec(backend.output().slice(from))?.[1];
  await waitUntil(
    () => line() !== undefined,
    `a memory line from pid ${backend.child.pid}`,
    10_000,
  );
  return JSON.parse(line()!) as ProcessMemory;
}

/** Calls per command name (INFO commandstats, test/helpers/command-counts.ts). */
export type Counts = Record<string, number>;

/** The calls per command the `servers` ran during `during` (no zeros, no INFO), and its ms. */
export async function commandsDuring(
  servers: readonly InfoClient[],
  during: () => Promise<unknown>,
) {
  const read = async (): Promise<Counts> => {
    const sum: Counts = {};
    for (const counts of await Promise.all(servers.map((server) => commandCounts(server))))
      for (const [name, calls] of Object.entries(counts)) sum[name] = (sum[name] ?? 0) + calls;
    return sum;
  };
  const before = await read();
  const startedAt = Date.now();
  await during();
  const ms = Date.now() - startedAt;
  const after = await read();
  const names = Object.keys(after).filter((name) => name !== 'info');
  const deltas = names.map((name) => [name, after[name]! - (before[name] ?? 0)] as const);
  return { counts: Object.fromEntries(deltas.filter(([, calls]) => calls !== 0)) as Counts, ms };
}
