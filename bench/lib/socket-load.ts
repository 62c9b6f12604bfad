// What the sockets section needs beyond the socket test helpers: a memory probe inside each spawned
// socket backend, many sockets opened with bounded concurrency; and what Redis ran between two
// readings of its own command counters (the cluster section's too).
//
// The probe: the section starts the backends with NODE_OPTIONS requiring this file (and
// BENCH_SOCKET_PROBE=1), so the unchanged test program answers SIGUSR2 with one line on stdout,
// `bench-memory {"rss":…,"heap":…}`, measured after a full GC. The backends print nothing else
// the section reads, and the test helpers stay as the tests use them.
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

export interface ProcessMemory {
  rss: number;
  heap: number;
}

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

/** What opening many sockets came to. */
export interface Opened {
  sockets: TestSocket[];
  /** The first refusal or error, when one stopped the opening early. */
  stoppedBy?: string;
}

/**
 * Opens `total` sockets to `url` with `open`, the i-th with `cookies[i % cookies.length]`,
 * `concurrency` at a time; stops at the first failure or at `deadline` (Date.now()), keeping what
 * opened.
 */
export async function openMany(
  open: (url: string, cookie: string) => Promise<TestSocket>,
  url: string,
  cookies: readonly string[],
  total: number,
  concurrency: number,
  deadline: number,
): Promise<Opened> {
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
