// Options of RedisSessionStore: the documented interface and the strict schema that parses them
// once at construction.
import { z } from 'zod';
import type { Redis } from 'ioredis';
import type { RedisClientType } from 'redis';
import type { SameOptions } from '../util/parse-options';
import { isIoredis, isNodeRedis } from './session-commands';

/**
 * A node-redis (`redis` 5/6) client, connected, whatever its modules, scripts, RESP version and
 * type mapping (their generics do not assign to one another, hence `any`, as connect-redis does).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type NodeRedisClient = RedisClientType<any, any, any, any, any>;

/** Options of `new RedisSessionStore(options)`. */
export interface RedisSessionStoreOptions {
  /**
   * The client: ioredis (`new Redis(…)`) or node-redis (`createClient(…)`, connected). The store
   * never closes it. Required.
   */
  redis: Redis | NodeRedisClient;
  /** Key prefix, as connect-redis's: sessions live at `<prefix><session id>`. Defaults to `'sess:'`. */
  prefix?: string;
  /**
   * Session lifetime in seconds when the session cookie has no `maxAge` (with one, the cookie's
   * expiry decides, as in connect-redis). Defaults to `86400`.
   */
  ttlSeconds?: number;
  /**
   * Share of a session's lifetime that must have passed since its expiry was last set before a
   * request renews it (an `EXPIRE`): between 0 (every request renews, as connect-redis does) and
   * 1. A session then lives between `(1 - renewAfter) × ttl` and `ttl` after its last request.
   * Defaults to `0.1`.
   */
  renewAfter?: number;
  /** Most sessions held in memory (the least recently used go first). Defaults to `10000`. */
  maxCachedSessions?: number;
}

export const redisSessionStoreOptionsSchema = z.strictObject({
  redis: z.custom<Redis | NodeRedisClient>((value) => isIoredis(value) || isNodeRedis(value), {
    error: 'must be an ioredis client or a connected node-redis client',
  }),
  prefix: z.string().default('sess:'),
  ttlSeconds: z.number().int().min(1).max(31_536_000).default(86_400),
  renewAfter: z.number().min(0).max(1).default(0.1),
  maxCachedSessions: z.number().int().min(0).max(10_000_000).default(10_000),
});

const _sameOptions: SameOptions<
  RedisSessionStoreOptions,
  z.input<typeof redisSessionStoreOptionsSchema>
> = true;
void _sameOptions;
