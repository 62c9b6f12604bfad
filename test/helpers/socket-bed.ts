// What the socket test files share: two socket backends (socket-backend-program.ts) on a
// redis-server and a simulator of the file's own, and how a test waits for a socket to close.
import { Redis } from 'ioredis';
import { RedisTokenStore } from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { startRedisServer, type TestRedisServer } from './redis-server';
import {
  openSocket,
  startSocketProcess,
  stopSocketProcesses,
  type SocketProcess,
  type TestSocket,
} from './spawn-socket-backends';
import { LOAD_ALLOWANCE_MS } from './load-allowance';

export interface SocketBed {
  redis: TestRedisServer;
  sim: PlatformSimulator;
  /** The driver's own client of the server, and a token store on it under the backends' prefix. */
  raw: Redis;
  store: RedisTokenStore;
  a: SocketProcess;
  b: SocketProcess;
}

/** Starts the bed before the file's tests (KEY_PREFIX `prefix`) and ends it, its sockets first, after them. */
export function useSocketBackends(prefix: string, take: (bed: SocketBed) => void): void {
  let bed: Partial<SocketBed> = {};
  beforeAll(async () => {
    const [redis, sim] = await Promise.all([startRedisServer(), startSimulator()]);
    bed = { redis, sim };
    const env = { REDIS_URL: redis.url, SIM_URL: sim.url, KEY_PREFIX: prefix };
    [bed.a, bed.b] = await Promise.all([startSocketProcess(env), startSocketProcess(env)]);
    bed.raw = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    bed.store = new RedisTokenStore({ redis: bed.raw, prefix: `${prefix}t:` });
    take(bed as SocketBed);
  }, 30_000);
  afterAll(async () => {
    await stopSocketProcesses([bed.a, bed.b].filter((p): p is SocketProcess => p !== undefined));
    await bed.store?.close();
    bed.raw?.disconnect();
    await Promise.all([bed.redis?.stop(), bed.sim?.close()]);
  });
}

/** Every socket `open` opened, ended after the file's tests (before the bed's end). */
export const opened: TestSocket[] = [];
afterAll(() => {
  for (const socket of opened.splice(0)) socket.ws.terminate();
});

/** Opens a socket to `url` with the session cookie, kept to be ended after the file. */
export async function open(url: string, cookie?: string): Promise<TestSocket> {
  const socket = await openSocket(url, cookie);
  opened.push(socket);
  return socket;
}

/** The bound docs/sockets.md states from a login's end to the close frame. */
export const CLOSE_WITHIN_MS = 1000;

/**
 * Resolves how the socket closed, failing if it did not within `ms` of `since` and the allowance: a
 * socket never closed by the package still fails (the records expire hours later); the bound itself
 * is tested on fake timers (test/unit/login-watch.test.ts).
 */
export async function closedWithin(socket: TestSocket, since: number, ms = CLOSE_WITHIN_MS) {
  const within = ms + LOAD_ALLOWANCE_MS;
  const closed = await Promise.race([
    socket.closed,
    new Promise<undefined>((resolve) => setTimeout(resolve, within + 500)),
  ]);
  if (closed === undefined) throw new Error(`the socket was still open ${within + 500} ms later`);
  expect(closed.at - since).toBeLessThanOrEqual(within);
  return closed;
}
