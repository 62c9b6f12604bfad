// Delaying proxies (replication-delay-proxy.ts) run together in a child process of their own
// (replication-delay-proxy-program.ts), driven over IPC. On the Cluster bed every client command
// passes through the proxies: run there, they take nothing of the caller's event loop, so a caller
// that measures latency (the bench driver) does not also relay the Redis traffic it measures.
import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { ReplicationDelayProxy } from './replication-delay-proxy';
import { ON_SOURCES } from './on-sources';

const ROOT = join(__dirname, '..', '..');
const PROGRAM = join(__dirname, 'replication-delay-proxy-program.ts');

/** What the parent asks; proxies are named by their port. Only setDelay goes unanswered. */
export type ProxyRequest =
  | { id: number; op: 'start'; targetPort: number; delayMs: number }
  | { id: number; op: 'close'; port: number }
  | { id: number; op: 'settled' }
  | { op: 'setDelay'; port: number; ms: number };

/** The answer to the request `id`: `port` for a start, `error` if it failed. */
export interface ProxyReply {
  id: number;
  port?: number;
  error?: string;
}

// A request that is answered, without the id ask() gives it (distributed over the union, so each
// keeps its own fields).
type Question<T = Extract<ProxyRequest, { id: number }>> = T extends unknown
  ? Omit<T, 'id'>
  : never;

interface Waiter {
  resolve(reply: ProxyReply): void;
  reject(error: Error): void;
}

export interface ReplicationDelayProxyProcess {
  /** A proxy to `targetPort` in the child; its close() returns once the port is closed there. */
  start(targetPort: number, delayMs?: number): Promise<ReplicationDelayProxy>;
  /** Resolves once every setDelay() sent so far has taken effect (messages are handled in order). */
  settled(): Promise<void>;
  /** Ends the child, and with it every proxy still open. */
  close(): Promise<void>;
}

/** Forks the child that runs the proxies; it exits when this process does or calls close(). */
export function startReplicationDelayProxyProcess(): ReplicationDelayProxyProcess {
  const child = fork(PROGRAM, [], {
    cwd: ROOT,
    execArgv: ON_SOURCES,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let nextId = 1;
  const waiting = new Map<number, Waiter>();
  child.on('message', (reply: ProxyReply) => {
    waiting.get(reply.id)?.resolve(reply);
    waiting.delete(reply.id);
  });
  // A child that died (or never started) answers nothing: fail what waits rather than hang.
  const failAll = (error: Error): void => {
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
  };
  child.on('error', failAll);
  child.once('exit', (code, signal) =>
    failAll(new Error(`the replication delay proxy process exited (${signal ?? code})`)),
  );

  const ask = (question: Question): Promise<ProxyReply> =>
    new Promise((resolve, reject) => {
      if (!child.connected) return reject(new Error('the replication delay proxy process is gone'));
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      child.send({ ...question, id }, (error) => {
        if (error) failAll(error);
      });
    });

  return {
    async start(targetPort, delayMs = 0) {
      const reply = await ask({ op: 'start', targetPort, delayMs });
      if (reply.error !== undefined) throw new Error(reply.error);
      const port = reply.port!;
      return {
        port,
        setDelay(ms) {
          if (child.connected) child.send({ op: 'setDelay', port, ms } satisfies ProxyRequest);
        },
        async close() {
          // The child gone or going, its ports close with it.
          if (!child.connected) return exited;
          await ask({ op: 'close', port });
        },
      };
    },
    async settled() {
      await ask({ op: 'settled' });
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // The child's cue to exit, as when this process dies: its 'disconnect'.
      if (child.connected) child.disconnect();
      await exited;
    },
  };
}
