// The delaying proxy of the failover beds (failover-bed.ts): a TCP proxy in front of a Redis node
// that holds what the node sends down a replication link for a set delay, so a replica lags its
// master. It runs in the process that starts it; replication-delay-proxy-process.ts runs several
// in a child process of their own.
import {
  createConnection,
  createServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net';

const HOST = '127.0.0.1';

/** A TCP proxy that holds what a master sends down a replication link for `delayMs`. */
export interface ReplicationDelayProxy {
  port: number;
  /** Delay for what the master sends from now on (what is held keeps its time and order). */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

// A replica asks for its stream with PSYNC (or SYNC): the element right after a `*N` header.
const SYNC_COMMAND = /\*\d+\r\n\$5\r\npsync\r\n|\*\d+\r\n\$4\r\nsync\r\n/i;

/**
 * Forwards a free loopback port to `targetPort`. Only connections that asked for a
 * replication stream are delayed, in the target→client direction, so clients can share the proxy
 * with replicas. When the target's side closes (the master died), what is still held is dropped:
 * the replica never got it, as after a crash.
 */
export async function startReplicationDelayProxy(
  targetPort: number,
  delayMs = 0,
): Promise<ReplicationDelayProxy> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let delay = delayMs;
  const server: Server = createServer((inbound) => {
    const outbound = createConnection({ host: HOST, port: targetPort });
    let replicating = false;
    let tail = '';
    const held: Array<{ chunk: Buffer; due: number }> = [];
    let timer: NodeJS.Timeout | undefined;
    let lastDue = 0;
    const release = (): void => {
      if (timer) timers.delete(timer);
      timer = undefined;
      const now = Date.now();
      while (held[0] && held[0].due <= now) inbound.write(held.shift()!.chunk);
      if (held[0]) {
        timer = setTimeout(release, held[0].due - now);
        timers.add(timer);
      }
    };
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        held.length = 0;
        if (timer) {
          clearTimeout(timer);
          timers.delete(timer);
        }
        timer = undefined;
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.on('data', (chunk: Buffer) => {
      if (!replicating) {
        // The tail catches a command split across two chunks.
        const text = tail + chunk.toString('latin1');
        replicating = SYNC_COMMAND.test(text);
        tail = text.slice(-16);
      }
      outbound.write(chunk);
    });
    outbound.on('data', (chunk: Buffer) => {
      if (!replicating || (delay === 0 && held.length === 0)) {
        inbound.write(chunk);
        return;
      }
      // Never before an earlier chunk: order is kept when the delay is lowered.
      const due = Math.max(Date.now() + delay, lastDue);
      lastDue = due;
      held.push({ chunk, due });
      if (!timer) {
        timer = setTimeout(release, due - Date.now());
        timers.add(timer);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Port 0: the kernel's pick, taken at once (no race with other servers being started).
    server.listen(0, HOST, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    setDelay(ms) {
      delay = ms;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
