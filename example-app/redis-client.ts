// The example's Redis client, node-redis or ioredis (REDIS_CLIENT), set up so that a stalled or
// absent Redis fails a request within about 2 s (503 store_unavailable) instead of hanging it, and
// reconnects by itself. One client serves the session store and the token store.
import type { EventEmitter } from 'node:events';
import { createClient } from 'redis';
import { Redis } from 'ioredis';
import type { RedisClientKind } from './config';

/**
 * A command not answered in 1 s fails: a request ends at its first failed read, the session's (1 s)
 * or, with the session served from memory, the token store's (its own 1.5 s deadline), so a stalled
 * Redis is a 503 within 1.5 s. (ioredis: commandTimeout; node-redis, which times out
 * only a command still waiting to be sent: a deadline around the session store, and the token
 * store's own.)
 */
export const COMMAND_TIMEOUT_MS = 1000;
/** How long a TCP connection may take to open; also how long a start waits for the first one. */
export const CONNECT_TIMEOUT_MS = 2000;
/** Reconnect forever, at most a second apart, so the app recovers when Redis returns. */
const reconnectDelayMs = (attempt: number): number => Math.min(attempt * 100, 1000);

/** A node-redis client (`redis` 5/6, RESP3 by default since 6); connect() is the caller's. */
function createNodeRedisClient(url: string) {
  return createClient({
    url,
    // While disconnected, a command fails at once instead of waiting in a queue for the reconnect.
    disableOfflineQueue: true,
    socket: { connectTimeout: CONNECT_TIMEOUT_MS, reconnectStrategy: reconnectDelayMs },
  });
}

/** A node-redis client as the example creates it. */
type NodeRedisClient = ReturnType<typeof createNodeRedisClient>;

/** An ioredis client (5/6); it connects by itself. */
export function createRedisClient(url: string): Redis {
  return new Redis(url, {
    // ioredis waits forever by default.
    commandTimeout: COMMAND_TIMEOUT_MS,
    // While disconnected, a queued command fails after one reconnect attempt instead of twenty.
    maxRetriesPerRequest: 1,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: reconnectDelayMs,
  });
}

/** The example's client, connecting, whichever kind it is. */
export type ExampleRedis = (
  { kind: 'redis'; client: NodeRedisClient } | { kind: 'ioredis'; client: Redis }
) & {
  /** True once the client has connected (until it is closed): /healthz says 503 before. */
  isReady(): boolean;
  /** Resolves true once the client is ready, false if `timeoutMs` passes first. */
  whenReady(timeoutMs: number): Promise<boolean>;
  /** Quits (waiting for the replies in flight), or drops the connection when it is not up. */
  close(): Promise<void>;
};

/** The client REDIS_CLIENT names, connecting to `url` (whenReady() tells when it has). */
export function connectExampleRedis(kind: RedisClientKind, url: string): ExampleRedis {
  let ready = false;
  if (kind === 'ioredis') {
    const client = createRedisClient(url);
    client.on('ready', () => (ready = true));
    client.on('end', () => (ready = false));
    // Connection errors are events; requests already answer 503 meanwhile, and it reconnects.
    client.on('error', () => undefined);
    return {
      kind,
      client,
      isReady: () => ready,
      whenReady: (timeoutMs) => readyWithin(client, () => ready, timeoutMs),
      close: async () => {
        await client.quit().catch(() => client.disconnect());
      },
    };
  }
  const client = createNodeRedisClient(url);
  client.on('ready', () => (ready = true));
  client.on('end', () => (ready = false));
  client.on('error', () => undefined);
  // connect() retries until Redis answers (or the client is closed), reporting each failure as an
  // `error` event: nothing to wait for here.
  client.connect().catch(() => undefined);
  return {
    kind,
    client,
    isReady: () => ready,
    whenReady: (timeoutMs) => readyWithin(client, () => ready, timeoutMs),
    close: async () => {
      if (client.isReady) await client.close().catch(() => client.destroy());
      else if (client.isOpen) client.destroy();
    },
  };
}

/** Both clients emit `ready` once connected (and again after each reconnect). */
function readyWithin(
  client: Pick<EventEmitter, 'once' | 'off'>,
  isReady: () => boolean,
  timeoutMs: number,
): Promise<boolean> {
  if (isReady()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (ready: boolean): void => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ready);
    };
    const onReady = (): void => settle(true);
    const timer = setTimeout(() => settle(false), timeoutMs);
    client.once('ready', onReady);
  });
}
