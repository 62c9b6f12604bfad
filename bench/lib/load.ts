// A small HTTP load generator on node:http with keep-alive agents: a closed loop (N clients, each
// sends its next request when the previous answer ends), a fixed-rate open loop (latency counted
// from the scheduled send time, so a slow server cannot hide its queue), and a one-shot burst.
import { Agent, request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';

/** One request: to which app process, which path, with which headers (e.g. the session cookie). */
export interface Target {
  port: number;
  path: string;
  headers?: OutgoingHttpHeaders;
}

/** One answer as the client saw it; status 0 when the request failed on the socket. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  ms: number;
}

/** What a run of many requests produced. */
export interface LoadResult {
  /** Latency of every finished request, in milliseconds, in completion order. */
  latencies: number[];
  /** Requests by HTTP status (0: socket error). */
  statuses: Map<number, number>;
  /** Wall time from the first send to the last answer, in milliseconds. */
  elapsedMs: number;
  /** Finished requests per second over `elapsedMs`. */
  requestsPerSecond: number;
}

/** A keep-alive agent: at most `maxSockets` connections per app process, kept open between runs. */
export const keepAliveAgent = (maxSockets: number): Agent =>
  new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'fifo' });

/** As autocannon's default: no answer in 10 s is a failure. */
const ANSWER_TIMEOUT_MS = 10_000;

/** Sends one GET; resolves (never rejects) with the status, headers, body and latency. */
export function send(agent: Agent, target: Target, keepBody = false): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      { agent, host: '127.0.0.1', port: target.port, path: target.path, headers: target.headers },
      (res) => {
        let body = '';
        if (keepBody) res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        else res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            ms: performance.now() - started,
          }),
        );
        res.on('error', () =>
          resolve({ status: 0, headers: {}, body, ms: performance.now() - started }),
        );
      },
    );
    req.on('error', () =>
      resolve({ status: 0, headers: {}, body: '', ms: performance.now() - started }),
    );
    // An answer that never comes fails the request (status 0) instead of holding the run forever.
    req.setTimeout(ANSWER_TIMEOUT_MS, () => req.destroy());
    req.end();
  });
}

function tally(statuses: Map<number, number>, status: number): void {
  statuses.set(status, (statuses.get(status) ?? 0) + 1);
}

function result(latencies: number[], statuses: Map<number, number>, startedAt: number): LoadResult {
  const elapsedMs = performance.now() - startedAt;
  return {
    latencies,
    statuses,
    elapsedMs,
    requestsPerSecond: (latencies.length / elapsedMs) * 1000,
  };
}

/**
 * `concurrency` clients send back to back for `durationMs`. `next(i)` gives the i-th request;
 * `undefined` stops that client (e.g. when the pre-issued entry codes run out).
 */
export async function closedLoop(options: {
  agent: Agent;
  concurrency: number;
  durationMs: number;
  next: (index: number) => Target | undefined;
}): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const startedAt = performance.now();
  const endAt = startedAt + options.durationMs;
  let index = 0;
  const client = async (): Promise<void> => {
    while (performance.now() < endAt) {
      const target = options.next(index++);
      if (target === undefined) return;
      const answer = await send(options.agent, target);
      latencies.push(answer.ms);
      tally(statuses, answer.status);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, client));
  return result(latencies, statuses, startedAt);
}

/**
 * Sends `rate` requests per second for `durationMs`, whatever the answers do (an open loop): one
 * due every 1/rate s, sent on the next timer tick (1 ms at the finest, so at thousands a second a
 * few go together). Each latency counts from the moment its request was due, so queueing in the
 * server, the agent or this process's own event loop shows up instead of silently lowering the rate.
 */
export async function fixedRate(options: {
  agent: Agent;
  rate: number;
  durationMs: number;
  next: (index: number) => Target;
}): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const intervalMs = 1000 / options.rate;
  const total = Math.floor((options.durationMs / 1000) * options.rate);
  const startedAt = performance.now();
  const pending: Promise<void>[] = [];
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    while (sent < total && startedAt + sent * intervalMs <= now) {
      const dueAt = startedAt + sent * intervalMs;
      pending.push(
        send(options.agent, options.next(sent)).then((answer) => {
          latencies.push(performance.now() - dueAt);
          tally(statuses, answer.status);
        }),
      );
      sent += 1;
    }
    // Yield to the event loop so answers are read; 1 ms is the finest timer node offers.
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(pending);
  return result(latencies, statuses, startedAt);
}

/** Sends every target at once and resolves each answer (with its body), in target order. */
export async function burst(agent: Agent, targets: readonly Target[]): Promise<Answer[]> {
  return Promise.all(targets.map((target) => send(agent, target, true)));
}

/** The `error` of an answer's JSON body ('socket' for no answer, '' for none). */
export function errorOf(answer: Pick<Answer, 'status' | 'body'>): string {
  if (answer.status === 0) return 'socket';
  try {
    return (JSON.parse(answer.body) as { error?: string }).error ?? '';
  } catch {
    return '';
  }
}

/** "200: 998, 0: 2" — the statuses of a run, for the results. */
export const statusList = (statuses: Map<number, number>): string =>
  [...statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status === 0 ? 'socket error' : status}: ${n}`)
    .join(', ');
