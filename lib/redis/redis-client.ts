// The Redis clients the package accepts, and the seam for each.
import type { RedisCommands } from './commands';
import { IoRedisCommands, isIoRedis, type IoRedisClient } from './ioredis-commands';
import {
  isNodeRedis,
  NodeRedisCommands,
  type NodeRedisClient,
  type NodeRedisCluster,
  type NodeRedisSentinel,
} from './node-redis-commands';

/**
 * A Redis client the package accepts:
 * - node-redis 5 or 6 (`redis`): `createClient()`, `createCluster()` or `createSentinel()`;
 * - ioredis 5 or 6: `new Redis(…)`, `new Redis({ sentinels, … })` or `new Cluster(…)`.
 * RESP2 or RESP3, any key prefix of the client's own.
 */
export type RedisClient = IoRedisClient | NodeRedisClient | NodeRedisCluster | NodeRedisSentinel;

/** Duck-typed so that a second copy of a client in node_modules (or another major) is accepted too. */
export const isRedisClient = (value: unknown): value is RedisClient =>
  typeof value === 'object' && value !== null && (isIoRedis(value) || isNodeRedis(value));

/** The seam over `client` (the options' schemas accept only what {@link isRedisClient} does). */
export const redisCommands = (client: RedisClient): RedisCommands =>
  isIoRedis(client) ? new IoRedisCommands(client) : new NodeRedisCommands(client);
