// The Redis clients the package accepts, made the same way for every suite that runs on each:
// `describe.each(clientKinds)` runs a suite on ioredis 5/6 and node-redis 5/6, RESP2 and RESP3.
import { Cluster as IoCluster5, Redis as IoRedis5, type RedisOptions } from 'ioredis';
import type { RedisClient } from '../../lib/redis/redis-client';

// The other libraries are loaded by the first client made of them: a test file on ioredis 5 alone
// does not load node-redis 5 and 6, the slowest of them to load (Jest loads them again per file).
const ioredis6 = () => import('ioredis6');
const nodeRedis = async (version: 5 | 6): Promise<NodeRedisLibrary> =>
  version === 6 ? import('redis') : import('redis5');

/** A node-redis client, cluster or sentinel, not yet connected. */
interface Connectable {
  on(event: 'error', listener: () => void): unknown;
  connect(): Promise<unknown>;
}

/** What is made here of node-redis 5 or 6, each given options as that version takes them. */
interface NodeRedisLibrary {
  createClient(options: never): Connectable;
  createCluster(options: never): Connectable;
  createSentinel(options: never): Connectable;
}

/** Where to connect and what a client should add of its own. */
export interface ClientPlace {
  port: number;
  host?: string;
  /** The client's own key prefix (ioredis `keyPrefix`; node-redis 6 `keyPrefix`). */
  keyPrefix?: string;
  /**
   * The library's own defaults (offline queue, retries, no command timeout) instead of the options
   * the store's documentation asks for: for the fault suites, where the store's deadline alone
   * must bound every call.
   */
  libraryDefaults?: boolean;
}

/** One kind of client, ready for a store. */
export interface ClientKind {
  /** e.g. `node-redis 6 (RESP3)`. */
  name: string;
  library: 'ioredis' | 'node-redis';
  resp: 2 | 3;
  /** Whether this client has a key prefix option of its own (node-redis 5 has none). */
  keyPrefixes: boolean;
  /** A connected client with the options the store's documentation asks for. */
  connect(place: ClientPlace): Promise<RedisClient>;
  /** A connected Cluster client on `nodes`. */
  connectCluster(nodes: Array<{ host: string; port: number }>): Promise<RedisClient>;
  /** A connected client of the master that `sentinels` watch under `name`. */
  connectSentinel(
    sentinels: Array<{ host: string; port: number }>,
    name: string,
  ): Promise<RedisClient>;
  /** Ends a client made by connect(), waiting for its replies; never rejects. */
  quit(client: RedisClient): Promise<void>;
  /** Ends a client with the library's own graceful call (ioredis `quit()`, node-redis `close()`). */
  end(client: RedisClient): Promise<unknown>;
  /** One PING on the client's connection (after every command sent before it). */
  ping(client: RedisClient): Promise<unknown>;
}

/** The options RedisTokenStore documents for ioredis: no piling up, no giving up. */
const ioredisOptions = (place: ClientPlace): RedisOptions => ({
  host: place.host ?? '127.0.0.1',
  port: place.port,
  ...(place.libraryDefaults === true
    ? { retryStrategy: () => 100 }
    : {
        maxRetriesPerRequest: 1,
        commandTimeout: 1000,
        connectTimeout: 2000,
        retryStrategy: (times: number) => Math.min(times * 50, 500),
      }),
  ...(place.keyPrefix === undefined ? {} : { keyPrefix: place.keyPrefix }),
});

function ioredisKind(version: 5 | 6, resp: 2 | 3): ClientKind {
  return {
    name: `ioredis ${version} (RESP${resp})`,
    library: 'ioredis',
    resp,
    keyPrefixes: true,
    async connect(place) {
      const options = { ...ioredisOptions(place), ...(version === 6 ? { protocol: resp } : {}) };
      const client =
        version === 5 ? new IoRedis5(options) : new (await ioredis6()).Redis(options as never);
      client.on('error', () => undefined);
      if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
      return client as RedisClient;
    },
    async connectCluster(nodes) {
      const { host: _host, port: _port, ...redisOptions } = ioredisOptions({ port: 0 });
      const options = {
        redisOptions: { ...redisOptions, ...(version === 6 ? { protocol: resp } : {}) },
      };
      const cluster =
        version === 5
          ? new IoCluster5(nodes, options)
          : new (await ioredis6()).Cluster(nodes, options as never);
      cluster.on('error', () => undefined);
      if (cluster.status !== 'ready')
        await new Promise((resolve) => cluster.once('ready', resolve));
      return cluster as RedisClient;
    },
    async connectSentinel(sentinels, name) {
      const { host: _host, port: _port, ...options } = ioredisOptions({ port: 0 });
      const all = { ...options, sentinels, name, ...(version === 6 ? { protocol: resp } : {}) };
      const client = version === 5 ? new IoRedis5(all) : new (await ioredis6()).Redis(all as never);
      client.on('error', () => undefined);
      if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
      return client as RedisClient;
    },
    async quit(client) {
      await (client as IoRedis5).quit().catch(() => undefined);
    },
    end: (client) => (client as IoRedis5).quit(),
    ping: (client) => (client as IoRedis5).ping(),
  };
}

function nodeRedisKind(version: 5 | 6, resp: 2 | 3): ClientKind {
  return {
    name: `node-redis ${version} (RESP${resp})`,
    library: 'node-redis',
    resp,
    keyPrefixes: version === 6,
    async connect(place) {
      const options = {
        socket: {
          host: place.host ?? '127.0.0.1',
          port: place.port,
          ...(place.libraryDefaults === true
            ? {}
            : {
                connectTimeout: 2000,
                reconnectStrategy: (retries: number) => Math.min(retries * 50, 500),
              }),
        },
        // A command timeout, as ioredis's `commandTimeout` (the store's deadline bounds it anyway).
        ...(place.libraryDefaults === true ? {} : { commandOptions: { timeout: 1000 } }),
        RESP: resp,
        ...(place.keyPrefix === undefined ? {} : { keyPrefix: place.keyPrefix }),
      };
      return connected((await nodeRedis(version)).createClient(options as never));
    },
    async connectCluster(nodes) {
      const options = {
        rootNodes: nodes.map((node) => ({ socket: node })),
        defaults: { socket: { connectTimeout: 2000 } },
        RESP: resp,
      };
      return connected((await nodeRedis(version)).createCluster(options as never));
    },
    async connectSentinel(sentinels, name) {
      const options = { name, sentinelRootNodes: sentinels, RESP: resp };
      return connected((await nodeRedis(version)).createSentinel(options as never));
    },
    async quit(client) {
      await (client as unknown as { close(): Promise<void> }).close().catch(() => undefined);
    },
    end: (client) => (client as unknown as { close(): Promise<void> }).close(),
    ping: (client) =>
      (client as unknown as { sendCommand(args: string[]): Promise<unknown> }).sendCommand([
        'PING',
      ]),
  };
}

/** Every client kind the package supports, each at its default protocol and the other one. */
export const clientKinds: ClientKind[] = [
  ioredisKind(5, 2),
  ioredisKind(6, 3),
  ioredisKind(6, 2),
  nodeRedisKind(6, 3),
  nodeRedisKind(6, 2),
  nodeRedisKind(5, 2),
  nodeRedisKind(5, 3),
];

/** One kind per library at its default protocol: for slower suites. */
export const defaultClientKinds: ClientKind[] = clientKinds.filter((kind) =>
  [
    'ioredis 5 (RESP2)',
    'ioredis 6 (RESP3)',
    'node-redis 6 (RESP3)',
    'node-redis 5 (RESP2)',
  ].includes(kind.name),
);

/** The client the behaviour suites run on (the `integration` Jest project). */
export const DEFAULT_CLIENT_KIND = 'ioredis 5 (RESP2)';

/**
 * The client kind the Redis store suites run on: `EPL_TEST_REDIS_CLIENT` (a kind's name, set by the
 * `ioredis6`, `node-redis` and `node-redis5` Jest projects), else the default, ioredis 5.
 */
/** A node-redis client, cluster or sentinel connected, its errors left to the test's assertions. */
async function connected(client: Connectable): Promise<RedisClient> {
  client.on('error', () => undefined);
  await client.connect();
  return client as unknown as RedisClient;
}

export function storeClientKind(): ClientKind {
  const name = process.env.EPL_TEST_REDIS_CLIENT ?? DEFAULT_CLIENT_KIND;
  const kind = clientKinds.find((candidate) => candidate.name === name);
  if (kind === undefined) throw new Error(`EPL_TEST_REDIS_CLIENT: no client kind named ${name}`);
  return kind;
}

/**
 * `client` with the commands for which `matches(args)` is true (args as Redis receives them,
 * e.g. `['EVALSHA', sha, …]`) passed through `wrap`; every other member is the client's own. For
 * ioredis that is `call` and `callBuffer`, for node-redis `sendCommand`: what the seam sends with.
 */
export function interceptCommands(
  client: RedisClient,
  matches: (args: readonly unknown[]) => boolean,
  wrap: (send: () => Promise<unknown>) => Promise<unknown>,
): RedisClient {
  type Send = (...args: unknown[]) => Promise<unknown>;
  const intercepted = new Map<PropertyKey, Send>();
  for (const name of ['call', 'callBuffer']) {
    const original = (client as unknown as Record<string, Send | undefined>)[name];
    if (
      typeof original !== 'function' ||
      typeof (client as { isCluster?: unknown }).isCluster !== 'boolean'
    )
      continue;
    intercepted.set(name, (...args) =>
      matches(args) ? wrap(() => original.apply(client, args)) : original.apply(client, args),
    );
  }
  if (intercepted.size === 0) {
    const original = (client as unknown as { sendCommand: Send }).sendCommand;
    intercepted.set('sendCommand', (args, ...rest) =>
      matches(args as unknown[])
        ? wrap(() => original.call(client, args, ...rest))
        : original.call(client, args, ...rest),
    );
  }
  return new Proxy(client, {
    get(target, property) {
      const replaced = intercepted.get(property);
      if (replaced !== undefined) return replaced;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

/**
 * `test` where `applies` holds, else nothing: a case that concerns one client only is registered in
 * that client's Jest project and absent elsewhere (not reported as skipped).
 */
export const testWhere = (applies: boolean): jest.It =>
  applies ? test : ((() => undefined) as unknown as jest.It);

/** `describe` where `applies` holds, else nothing (see testWhere). */
export const describeWhere = (applies: boolean): jest.Describe =>
  applies ? describe : ((() => undefined) as unknown as jest.Describe);
