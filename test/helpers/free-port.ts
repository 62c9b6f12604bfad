// Picks a TCP port that is free right now on loopback (redis-server cannot pick its own).
//
// Not from the kernel's ephemeral range (32768–60999 by default): a port the kernel hands out for
// `listen(0)` is free again once the probe closes, and every outgoing connection of any process may
// take it before redis-server binds it (the failover beds bind a dozen ports each while thousands
// of connections come and go). Below that range no outgoing connection takes a port, and each Jest
// worker draws from a block of its own, so two workers never pick the same one; within a process,
// a port is handed out once.
import { createServer } from 'node:net';

const FIRST_PORT = 20_000;
const BLOCK = 2_000;
const handedOut = new Set<number>();

/** Resolves true when `port` can be listened on now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  const worker = Number(process.env.JEST_WORKER_ID ?? '0');
  // Block 0 outside Jest (the bench, a script); workers 1, 2, … their own.
  const start = FIRST_PORT + (worker % 6) * BLOCK;
  for (let attempt = 0; attempt < BLOCK; attempt += 1) {
    const port = start + Math.floor(Math.random() * BLOCK);
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${start}–${start + BLOCK - 1}`);
}
