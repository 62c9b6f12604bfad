// Which clients the Redis seam accepts, by type (checked by tsc) and at run time: each of
// node-redis 5/6 and ioredis 5/6, plain, Cluster and Sentinel, is recognised without connecting.
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster, createSentinel } from 'redis';
import {
  createClient as createClient5,
  createCluster as createCluster5,
  createSentinel as createSentinel5,
} from 'redis5';
import { redisCommands, type RedisClient } from '../../lib/redis/redis-client';
import { IoRedisCommands } from '../../lib/redis/ioredis-commands';
import { NodeRedisCommands } from '../../lib/redis/node-redis-commands';

const lazy = { lazyConnect: true } as const;
const cases: Array<[string, () => RedisClient, string, string]> = [
  ['node-redis 6 createClient', () => createClient(), 'node-redis', 'standalone'],
  ['node-redis 6 createClient RESP3', () => createClient({ RESP: 3 }), 'node-redis', 'standalone'],
  ['node-redis 6 createCluster', () => createCluster({ rootNodes: [] }), 'node-redis', 'cluster'],
  [
    'node-redis 6 createSentinel',
    () => createSentinel({ name: 'm', sentinelRootNodes: [] }),
    'node-redis',
    'sentinel',
  ],
  ['node-redis 5 createClient', () => createClient5(), 'node-redis', 'standalone'],
  ['node-redis 5 createCluster', () => createCluster5({ rootNodes: [] }), 'node-redis', 'cluster'],
  [
    'node-redis 5 createSentinel',
    () => createSentinel5({ name: 'm', sentinelRootNodes: [] }),
    'node-redis',
    'sentinel',
  ],
  ['ioredis Redis', () => new Redis(lazy), 'ioredis', 'standalone'],
  [
    'ioredis Redis with sentinels',
    () => new Redis({ ...lazy, sentinels: [{ host: '127.0.0.1', port: 1 }], name: 'm' }),
    'ioredis',
    'sentinel',
  ],
  ['ioredis Cluster', () => new Cluster([], { lazyConnect: true }), 'ioredis', 'cluster'],
];

test.each(cases)('%s is accepted', (_name, make, library, topology) => {
  const client = make();
  const commands = redisCommands(client);
  expect(commands).toBeInstanceOf(library === 'ioredis' ? IoRedisCommands : NodeRedisCommands);
  expect(commands.topology).toBe(topology);
  if (client instanceof Redis || client instanceof Cluster) client.disconnect();
});
