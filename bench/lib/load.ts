// A small HTTP load generator on node:http with keep-alive agents: a closed loop (N clients, each
// sends its next request when the previous answer ends), a fixed-rate open loop (latency counted
// from the scheduled send time, so a slow server cannot hide its queue), and a one-shot burst.
import { Agent, request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';

/** One request: to which app process, which path, with which headers (e.g. the session cookie). */
export type Target = { port: number; path: string; headers?: OutgoingHttpHeaders };

/** A logged-in player's GET of `path` on the app process at `port`. */
export const asPlayer = (port: number, cookie: string, path = '/api/me') => ({
  port,
  path,
  headers: { cookie, accept: 'application/json' },
});

/** One answer as the client saw it; status 0 when the request failed on the socket. */
export type Answer = { status: number; headers: IncomingHttpHeaders; body: string; ms: number };

/** What a run of many requests produced: every latency (ms), the statuses, the wall time. */
export type LoadResult = { latencies: number[]; statuses: Map<number, number>; elapsedMs: number };

/** A keep-alive agent: at most `maxSockets` connections per app process, kept open between runs. */
export const keepAliveAgent = (maxSockets: number): Agent =>
  new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'fifo' });

/** Sends one GET; resolves (never rejects) with the status, headers, body and latency. */
export function send(agent: Agent, target: Target, keepBody = false): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    let body = '';
    const done = (status: number, headers: IncomingHttpHeaders = {}): void =>
      resolve({ status, headers, body, ms: performance.now() - started });
    const req = request({ agent, host: '127.0.0.1', ...target }, (res) => {
      if (keepBody) res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      else res.resume();
      res.on('end', () => done(res.statusCode ?? 0, res.headers));
      res.on('error', () => done(0));
    });
    req.on('error', () => done(0));
    // As autocannon's default: an answer that never comes fails the request (status 0) in 10 s.
    req.setTimeout(10_000, () => req.destroy());
    req.end();
  });
}

/** Runs `task(0)`, `task(1)`, … with `concurrency` of them in flight, until one answers false. */
export async function inFlight(
  concurrency: number,
  task: (index: number) => Promise<boolean | void>,
): Promise<void> {
  let [next, done] = [0, false];
  const worker = async (): Promise<void> => {
    while (!done) if ((await task(next++)) === false) done = true;
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Runs `load`, which reports each answer through `note`, and sums it up. */
async function measured(
  load: (note: (status: number, ms: number) => void) => Promise<unknown>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const startedAt = performance.now();
  await load((status, ms) => {
    latencies.push(ms);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  });
  return { latencies, statuses, elapsedMs: performance.now() - startedAt };
}

/** How long a run lasts, and through which agent. */
type Run = { agent: Agent; durationMs: number };

/** `concurrency` clients send `next(i)` back to back for `durationMs` (or until it is undefined). */
export function closedLoop(
  options: Run & { concurrency: number; next: (index: number) => Target | undefined },
): Promise<LoadResult> {
  const endAt = performance.now() + options.durationMs;
  return measured((note) =>
    inFlight(options.concurrency, async (index) => {
      const target = performance.now() < endAt ? options.next(index) : undefined;
      if (target === undefined) return false;
      const answer = await send(options.agent, target);
      note(answer.status, answer.ms);
    }),
  );
}

/** `rate` requests a second whatever the answers, each timed from when it is due: a queue shows. */
export function fixedRate(options: Run & { rate: number; target: Target }): Promise<LoadResult> {
  const total = Math.floor((options.durationMs / 1000) * options.rate);
  return measured(async (note) => {
    const startedAt = performance.now();
    const dueOf = (n: number): number => startedAt + (n * 1000) / options.rate;
    const pending: Promise<void>[] = [];
    let sent = 0;
    while (sent < total) {
      const now = performance.now();
      for (; sent < total && dueOf(sent) <= now; sent += 1) {
        const dueAt = dueOf(sent);
        const answered = send(options.agent, options.target);
        pending.push(answered.then((answer) => note(answer.status, performance.now() - dueAt)));
      }
      // Yield to the event loop so answers are read; 1 ms is the finest timer node offers.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(pending);
  });
}

/** Sends every target at once and resolves each answer (with its body), in target order. */
export const burst = (agent: Agent, targets: readonly Target[]): Promise<Answer[]> =>
  Promise.all(targets.map((target) => send(agent, target, true)));

/** The `error` of an answer's JSON body ('socket' for no answer, '' for none). */
export function errorOf(answer: Pick<Answer, 'status' | 'body'>): string {
  if (answer.status === 0) return 'socket';
  try {
    return (JSON.parse(answer.body) as { error?: string }).error ?? '';
  } catch {
    return '';
  }
}
