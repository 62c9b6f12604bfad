// The example's Redis client, node-redis or ioredis (REDIS_CLIENT), on one server (REDIS_URL),
// through Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_NAME) or on a Cluster (REDIS_CLUSTER_NODES), set
// up so that a stalled or absent Redis fails a request within about 2 s (503 store_unavailable)
// instead of hanging it, and reconnects by itself. One client serves the session store and the
// token store.
import type { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, createCluster, createSentinel } from 'redis';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisAddress, RedisClientKind, RedisTarget } from './config';

/**
 * A command not answered in 1 s fails: a request ends at its first failed read, the session's (1 s)
 * or, with the session served from memory, the token store's (its own 1.5 s deadline), so a stalled
 * Redis is a 503 within 1.5 s. (ioredis: commandTimeout; node-redis, which times out
 * only a command still waiting to be sent: a deadline around the session store, and the token
 * store's own.)
 */
export const COMMAND_TIMEOUT_MS = 1000;
/** How long a TCP connection may take to open. */
export const CONNECT_TIMEOUT_MS = 2000;
/**
 * How long a start waits for the first connection: a few of CONNECT_TIMEOUT_MS, since through a
 * Sentinel or a Cluster the first one takes several, and a busy machine starts slowly.
 */
export const FIRST_CONNECTION_WAIT_MS = 3 * CONNECT_TIMEOUT_MS;
/** Reconnect forever, at most a second apart, so the app recovers when Redis returns. */
const reconnectDelayMs = (attempt: number): number => Math.min(attempt * 100, 1000);

/**
 * node-redis's options for each connection to a Redis server: the one server, each Cluster node
 * (createCluster's `defaults`, which its topology discovery uses too), the Sentinel's master
 * (createSentinel's `nodeClientOptions`).
 */
const nodeRedisServerOptions = () => ({
  // While disconnected, a command fails at once instead of waiting in a queue for the reconnect.
  disableOfflineQueue: true,
  socket: { connectTimeout: CONNECT_TIMEOUT_MS, reconnectStrategy: reconnectDelayMs },
});

/** A node-redis client (`redis` 5/6, RESP3 by default since 6); connect() is the caller's. */
function createNodeRedisClient(url: string) {
  return createClient({ url, ...nodeRedisServerOptions() });
}

/**
 * A node-redis Sentinel: the master the sentinels know as `name`, followed through a failover;
 * connect() is the caller's. The sentinels' own connections (which node-redis never reconnects:
 * it asks the next sentinel) get the connect timeout.
 */
function createNodeRedisSentinel(sentinels: RedisAddress[], name: string) {
  return createSentinel({
    name,
    sentinelRootNodes: sentinels,
    nodeClientOptions: nodeRedisServerOptions(),
    sentinelClientOptions: { socket: { connectTimeout: CONNECT_TIMEOUT_MS } },
  });
}

/** A node-redis Cluster found from the seed `nodes`; connect() is the caller's. */
function createNodeRedisCluster(nodes: RedisAddress[]) {
  return createCluster({
    rootNodes: nodes.map(({ host, port }) => ({ socket: { host, port } })),
    defaults: nodeRedisServerOptions(),
  });
}

/** A node-redis client as the example creates it, whichever topology. */
type NodeRedisClient =
  | ReturnType<typeof createNodeRedisClient>
  | ReturnType<typeof createNodeRedisSentinel>
  | ReturnType<typeof createNodeRedisCluster>;

/** ioredis's options for each connection to a Redis server (a Cluster's `redisOptions`). */
const ioredisServerOptions = () => ({
  // ioredis waits forever by default.
  commandTimeout: COMMAND_TIMEOUT_MS,
  // While disconnected, a queued command fails after one reconnect attempt instead of twenty.
  maxRetriesPerRequest: 1,
  connectTimeout: CONNECT_TIMEOUT_MS,
});

/** An ioredis client (5/6) of one server; it connects by itself. */
export function createRedisClient(url: string): Redis {
  return new Redis(url, { ...ioredisServerOptions(), retryStrategy: reconnectDelayMs });
}

/**
 * An ioredis client of the master the sentinels know as `name` (it connects by itself, and follows
 * a failover). The sentinels are asked with the same connect timeout and a command timeout (ioredis
 * sets none: a stalled sentinel would hold the connection forever), and asked again from the first
 * one, at most a second apart, when none answers.
 */
function createIoredisSentinel(sentinels: RedisAddress[], name: string): Redis {
  return new Redis({
    sentinels,
    name,
    ...ioredisServerOptions(),
    retryStrategy: reconnectDelayMs,
    sentinelCommandTimeout: COMMAND_TIMEOUT_MS,
    sentinelRetryStrategy: reconnectDelayMs,
  } satisfies RedisOptions);
}

/**
 * An ioredis Cluster found from the seed `nodes` (it connects by itself). The per-server options go
 * in `redisOptions`; reconnecting is the Cluster's own (`clusterRetryStrategy`: its nodes'
 * connections do not reconnect, it finds the nodes again). `maxRetriesPerRequest` does not bound
 * the Cluster's own offline queue, which would hold every command sent while no node answers and
 * run it once the Cluster is back, long after the request gave up: turned off, such a command fails
 * at once, as on node-redis. (The example waits for `ready` before it serves.)
 */
function createIoredisCluster(nodes: RedisAddress[]): Cluster {
  return new Cluster(nodes, {
    redisOptions: ioredisServerOptions(),
    clusterRetryStrategy: reconnectDelayMs,
    enableOfflineQueue: false,
  });
}

/** The example's client, connecting, whichever kind and topology it is. */
export type ExampleRedis = (
  { kind: 'redis'; client: NodeRedisClient } | { kind: 'ioredis'; client: Redis | Cluster }
) & {
  topology: RedisTarget['topology'];
  /** True once the client has connected (until it is closed): /healthz says 503 before. */
  isReady(): boolean;
  /** Resolves true once the client is ready, false if `timeoutMs` passes first. */
  whenReady(timeoutMs: number): Promise<boolean>;
  /** Quits (waiting for the replies in flight), or drops the connection when it is not up. */
  close(): Promise<void>;
};

/** The client REDIS_CLIENT names, connecting to `target` (whenReady() tells when it has). */
export function connectExampleRedis(kind: RedisClientKind, target: RedisTarget): ExampleRedis {
  return kind === 'ioredis' ? connectIoredis(target) : connectNodeRedis(target);
}

function connectIoredis(target: RedisTarget): ExampleRedis {
  const client =
    target.topology === 'cluster'
      ? createIoredisCluster(target.nodes)
      : target.topology === 'sentinel'
        ? createIoredisSentinel(target.sentinels, target.name)
        : createRedisClient(target.url);
  let ready = false;
  // Both a Redis and a Cluster say `ready` once connected (again after each reconnect) and `end`
  // once they stop for good.
  client.on('ready', () => (ready = true));
  client.on('end', () => (ready = false));
  // Connection errors are events; requests already answer 503 meanwhile, and it reconnects.
  client.on('error', () => undefined);
  return {
    kind: 'ioredis',
    client,
    topology: target.topology,
    isReady: () => ready,
    whenReady: (timeoutMs) => readyWithin(client, 'ready', () => ready, timeoutMs),
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

function connectNodeRedis(target: RedisTarget): ExampleRedis {
  let ready = false;
  if (target.topology === 'standalone') {
    const client = createNodeRedisClient(target.url);
    client.on('ready', () => (ready = true));
    client.on('end', () => (ready = false));
    client.on('error', () => undefined);
    // connect() retries until Redis answers (or the client is closed), reporting each failure as an
    // `error` event: nothing to wait for here.
    client.connect().catch(() => undefined);
    return {
      kind: 'redis',
      client,
      topology: target.topology,
      isReady: () => ready,
      whenReady: (timeoutMs) => readyWithin(client, 'ready', () => ready, timeoutMs),
      close: async () => {
        if (client.isReady) await client.close().catch(() => client.destroy());
        else if (client.isOpen) client.destroy();
      },
    };
  }
  // A Sentinel says `ready` once it has connected to the master (again after a failover) and `end`
  // once closed; a Cluster says `connect` once it has found the nodes and `disconnect` once closed.
  const [client, readyEvent, endEvent] =
    target.topology === 'sentinel'
      ? [createNodeRedisSentinel(target.sentinels, target.name), 'ready', 'end']
      : [createNodeRedisCluster(target.nodes), 'connect', 'disconnect'];
  client.on(readyEvent, () => (ready = true));
  client.on(endEvent, () => (ready = false));
  client.on('error', () => undefined);
  // Unlike a client of one server, whose connect() retries for ever, these give up: a Cluster when
  // no seed node answers, a Sentinel after its `maxCommandRediscovers` rounds of asking the
  // sentinels. Try again, at most a second apart, until one connects or the example closes.
  const closing = new AbortController();
  const connecting = (async () => {
    for (let attempt = 1; !closing.signal.aborted; attempt += 1) {
      try {
        await client.connect();
        return;
      } catch {
        await sleep(reconnectDelayMs(attempt), undefined, { signal: closing.signal }).catch(
          () => undefined,
        );
      }
    }
  })();
  return {
    kind: 'redis',
    client,
    topology: target.topology,
    isReady: () => ready,
    whenReady: (timeoutMs) => readyWithin(client, readyEvent, () => ready, timeoutMs),
    close: async () => {
      closing.abort();
      // A close() while connect() is under way stops it; connect() then settles.
      if (client.isOpen) await client.close().catch(() => client.destroy());
      await connecting;
    },
  };
}

/** Resolves true at the client's `event` saying it is ready, false after `timeoutMs`. */
function readyWithin(
  client: Pick<EventEmitter, 'once' | 'off'>,
  event: string,
  isReady: () => boolean,
  timeoutMs: number,
): Promise<boolean> {
  if (isReady()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (ready: boolean): void => {
      clearTimeout(timer);
      client.off(event, onReady);
      resolve(ready);
    };
    const onReady = (): void => settle(true);
    const timer = setTimeout(() => settle(false), timeoutMs);
    client.once(event, onReady);
  });
}
