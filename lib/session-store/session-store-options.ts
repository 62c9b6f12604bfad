// Options of RedisSessionStore: the documented interface and the strict schema that parses them
// once at construction.
import { z } from 'zod';
import type { SameOptions } from '../util/parse-options';
import type { RedisClient } from '../stores/redis/redis-client';
import { isIoRedis } from '../stores/redis/ioredis-commands';
import { isNodeRedis } from '../stores/redis/node-redis-commands';

/** Options of `new RedisSessionStore(options)`. */
export interface RedisSessionStoreOptions {
  /**
   * The client, as RedisTokenStore takes it: node-redis 5/6 (`createClient()`, `createSentinel()`;
   * connected) or ioredis 5/6 (`new Redis(…)`). The store never closes it. Required.
   */
  redis: RedisClient;
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
  /**
   * Longest time a call may take before it fails with `StoreUnavailableError` (express-session
   * then passes it to the app's error handler), in milliseconds (1 to 60000). Defaults to `1500`.
   */
  operationTimeoutMs?: number;
}

export const redisSessionStoreOptionsSchema = z.strictObject({
  redis: z.custom<RedisClient>(
    (value) =>
      typeof value === 'object' && value !== null && (isIoRedis(value) || isNodeRedis(value)),
    { error: 'must be a node-redis client (createClient()) or an ioredis client (new Redis())' },
  ),
  prefix: z.string().default('sess:'),
  ttlSeconds: z.number().int().min(1).max(31_536_000).default(86_400),
  renewAfter: z.number().min(0).max(1).default(0.1),
  maxCachedSessions: z.number().int().min(0).max(10_000_000).default(10_000),
  operationTimeoutMs: z.number().int().min(1).max(60_000).default(1500),
});

const _sameOptions: SameOptions<
  RedisSessionStoreOptions,
  z.input<typeof redisSessionStoreOptionsSchema>
> = true;
void _sameOptions;
