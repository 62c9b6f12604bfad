// What most integration test files set up around their tests: the platform simulator for the file
// (its faults cleared and its call counts reset before each test) and, where the file needs one, a
// client of the suite's Redis; with what a test opens (stores, servers) closed after it or after
// the file. A file keeps its own `let sim` (and `let redis`), handed over once they run.
import { Redis } from 'ioredis';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { RedisTokenStore } from 'express-platform-login';
import type { RedisClient } from '../../lib/redis/redis-client';
import { storeClientKind } from './redis-clients';
import { startRedisServer, type TestRedisServer } from './redis-server';
import { startAppProcess, stopAppProcesses, type AppProcess } from './spawn-game-backends';

type SimulatorOptions = Parameters<typeof startSimulator>[0];
interface Closable {
  close(): Promise<unknown> | void;
}

/** Starts the simulator before the file's tests and stops it after them. */
export function useSimulator(
  take: (sim: PlatformSimulator) => void,
  options?: SimulatorOptions,
): void {
  let sim: PlatformSimulator | undefined;
  beforeAll(async () => {
    sim = await startSimulator(options);
    take(sim);
  });
  afterAll(() => sim?.close());
  beforeEach(() => {
    sim!.clearFaults();
    sim!.resetCalls();
  });
}

export interface SimulatorAndRedis {
  /** Closed after the test that opened it (a store follows its client's end). */
  opened<T extends Closable>(thing: T): T;
  /** Closed after the file's tests, before the Redis client and the simulator. */
  apps: Closable[];
}

/** The simulator and a client of the suite's Redis (REDIS_URL) for the file's tests. */
export function useSimulatorAndRedis(
  take: (bed: { sim: PlatformSimulator; redis: Redis }) => void,
): SimulatorAndRedis {
  let redis: Redis | undefined;
  const open: Closable[] = [];
  const apps: Closable[] = [];
  afterEach(() => Promise.all(open.splice(0).map((thing) => thing.close())));
  // Declared before the simulator's: jest runs a file's afterAll hooks in the order they came.
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    redis?.disconnect();
  });
  useSimulator((sim) => {
    redis = new Redis(process.env.REDIS_URL!);
    take({ sim, redis });
  });
  return {
    opened: (thing) => {
      open.push(thing);
      return thing;
    },
    apps,
  };
}

export interface PrivateRedis {
  server: TestRedisServer;
  sim: PlatformSimulator;
  /** A plain client of the server, for looking at it from outside. */
  raw: Redis;
}

/**
 * A redis-server of the file's own (its counters and keys the tests' alone) and the simulator;
 * after each test its `closers` run, last first, and the server is emptied.
 */
export function usePrivateRedis(take: (bed: PrivateRedis) => void): {
  closers: (() => Promise<unknown> | void)[];
} {
  let bed: PrivateRedis | undefined;
  const closers: (() => Promise<unknown> | void)[] = [];
  beforeAll(async () => {
    const [server, sim] = await Promise.all([startRedisServer(), startSimulator()]);
    bed = { server, sim, raw: new Redis(server.url) };
    take(bed);
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await bed!.raw.flushdb();
  });
  afterAll(async () => {
    bed?.raw.disconnect();
    await Promise.all([bed?.server.stop(), bed?.sim.close()]);
  });
  return { closers };
}

export interface GameBackends {
  sim: PlatformSimulator;
  redis: Redis;
  /** The driver's token store on `redis`, under the processes' prefix. */
  store: RedisTokenStore;
  apps: AppProcess[];
}

/** `count` game backend processes (game-backend-program.ts) on the suite's Redis under `prefix`. */
export function useGameBackends(
  count: number,
  prefix: string,
  take: (bed: GameBackends) => void,
): void {
  let bed: GameBackends | undefined;
  afterAll(async () => {
    await stopAppProcesses(bed?.apps ?? []);
    bed?.redis.disconnect();
  });
  let sim: PlatformSimulator;
  useSimulator((started) => (sim = started));
  beforeAll(async () => {
    const redis = new Redis(process.env.REDIS_URL!);
    const store = new RedisTokenStore({ redis, prefix: `${prefix}t:` });
    const env = { REDIS_URL: process.env.REDIS_URL!, SIM_URL: sim.url, KEY_PREFIX: prefix };
    const apps = await Promise.all(Array.from({ length: count }, () => startAppProcess(env)));
    bed = { sim, redis, store, apps };
    take(bed);
  }, 60_000);
}

/** A store suite's clients: a plain ioredis connection to look at Redis, and the stores' client. */
export interface StoreClients {
  redis: Redis;
  client: RedisClient;
}

/**
 * The clients of a store suite on the suite's Redis: the stores run on storeClientKind()'s (ioredis,
 * or node-redis in the `node-redis` projects); the keys under `prefix` are deleted after the file.
 */
export function useStoreClients(prefix: string, take: (clients: StoreClients) => void): void {
  const kind = storeClientKind();
  let clients: StoreClients | undefined;
  beforeAll(async () => {
    const redis = new Redis(process.env.REDIS_URL!, {
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
    });
    const url = new URL(process.env.REDIS_URL!);
    clients = { redis, client: await kind.connect({ host: url.hostname, port: Number(url.port) }) };
    take(clients);
  });
  afterAll(async () => {
    if (clients === undefined) return;
    const keys = await clients.redis.keys(`${prefix}*`);
    if (keys.length > 0) await clients.redis.del(...keys);
    await kind.quit(clients.client);
    await clients.redis.quit();
  });
}
