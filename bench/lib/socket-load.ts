// What the sockets section needs beyond the socket test helpers: a memory probe inside each spawned
// socket backend (preloaded through NODE_OPTIONS, so the test program stays as the tests use it: it
// answers SIGUSR2 with `bench-memory {"rss":…,"heap":…}` on stdout, after a full GC), many sockets
// opened with bounded concurrency; and what Redis ran between two readings of its command counters.
// Types only: this file is also preloaded into the backends, before anything else is set up.
import type { SocketProcess, TestSocket } from '../../test/helpers/spawn-socket-backends';

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
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const line = /bench-memory (\{[^\n]*\})\n/.exec(backend.output().slice(from));
    if (line !== null) return JSON.parse(line[1]!) as ProcessMemory;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no memory line from pid ${backend.child.pid} within 10 s`);
}

/** Opens `total` sockets, `concurrency` at a time, until a failure or `deadline` (Date.now()). */
export async function openMany(
  open: (url: string, cookie: string) => Promise<TestSocket>,
  url: string,
  cookies: readonly string[],
  total: number,
  concurrency: number,
  deadline: number,
): Promise<{ sockets: TestSocket[]; stoppedBy?: string }> {
  const sockets: TestSocket[] = [];
  let next = 0;
  let stoppedBy: string | undefined;
  const worker = async (): Promise<void> => {
    while (stoppedBy === undefined && next < total) {
      if (Date.now() > deadline) {
        stoppedBy = `time limit after ${sockets.length} sockets`;
        return;
      }
      const index = next++;
      try {
        sockets.push(await open(url, cookies[index % cookies.length]!));
      } catch (error) {
        stoppedBy ??= `${(error as Error).message} after ${sockets.length} sockets`;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { sockets, stoppedBy };
}

/** Calls per command name (INFO commandstats, test/helpers/command-counts.ts). */
export type Counts = Record<string, number>;

/** Calls per command between two readings, less the driver's own INFO calls; zeros left out. */
export const commandDelta = (before: Counts, after: Counts): Counts =>
  Object.fromEntries(
    Object.keys(after)
      .filter((name) => name !== 'info')
      .map((name) => [name, after[name]! - (before[name] ?? 0)] as const)
      .filter(([, calls]) => calls !== 0),
  );
