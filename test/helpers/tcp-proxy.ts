// A TCP proxy on loopback that can go silent: freeze() stops forwarding in both directions without
// closing anything (a half-open connection: no FIN, no RST, nothing delivered), thaw() resumes.
import {
  createServer,
  createConnection,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net';
import { freePort } from './free-port';

export interface TcpProxy {
  port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let frozen = false;
  const server: Server = createServer((inbound) => {
    const outbound = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        inbound.destroy();
        outbound.destroy();
      });
    }
    // Plain writes, not pipe(): pipe() may resume a socket freeze() paused.
    inbound.on('data', (chunk) => outbound.write(chunk));
    outbound.on('data', (chunk) => inbound.write(chunk));
    if (frozen) for (const socket of [inbound, outbound]) socket.pause();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    // Paused sockets read nothing: bytes wait in the kernel and nothing is answered or sent on.
    freeze() {
      frozen = true;
      for (const socket of sockets) socket.pause();
    },
    thaw() {
      frozen = false;
      for (const socket of sockets) socket.resume();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A server that takes every connection and drops it at once: a Redis (or sentinel) that never answers. */
export async function startDropper(): Promise<{
  port: number;
  /** Connections taken so far. */
  connections(): number;
  /**
   * Whether, within five windows of 1.5 s, one passes without a connection. A client left trying
   * reconnects at most 1 s apart (the dropper ends each connection at once), so it never leaves
   * such a window. The first window after a close may still see one: a connection made before the
   * close can reach the dropper (in the test's process) after it on a loaded machine, and ioredis's
   * Sentinel connector, closed while it waits to ask the sentinels again, asks once more.
   */
  silentWindowComes(): Promise<boolean>;
  close(): void;
}> {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    async silentWindowComes() {
      for (let window = 0; window < 5; window += 1) {
        const before = connections;
        await new Promise((resolve) => setTimeout(resolve, 1500));
        if (connections === before) return true;
      }
      return false;
    },
    close: () => void server.close(),
  };
}
