// Options of RedisSessionStore: one strict schema, documented field by field, parsed once.
import { z } from 'zod';
import { integerOption, type OptionsSchema } from '../util/parse-options';
import { isRedisClient, type RedisClient } from '../redis/redis-client';
import { DEFAULT_ENTRIES, MAX_ENTRIES } from '../caching/bounds';

const redisSessionStoreShape = {
  /**
   * The client, as RedisTokenStore takes it: node-redis 5/6 (`createClient()`, `createCluster()`,
   * `createSentinel()`; connected) or ioredis 5/6 (`new Redis(…)`, `new Cluster(…)`). The store
   * never closes it. Required.
   */
  redis: z.custom<RedisClient>(isRedisClient, {
    error: 'must be a node-redis client (createClient()) or an ioredis client (new Redis())',
  }),
  /** Key prefix, as connect-redis's: sessions live at `<prefix><session id>`. Defaults to `'sess:'`. */
  prefix: z.string().default('sess:'),
  /**
   * Session lifetime in seconds when the session cookie has no `maxAge` (with one, the cookie's
   * expiry decides, as in connect-redis). Defaults to `86400`.
   */
  ttlSeconds: integerOption(1, 31_536_000, ' number of seconds').default(86_400),
  /**
   * Share of a session's lifetime that must have passed since its expiry was last set before a
   * request renews it (an `EXPIRE`): between 0 (every request renews, as connect-redis does) and
   * 1. A session then lives between `(1 - renewAfter) × ttl` and `ttl` after its last request.
   * Defaults to `0.1`.
   */
  renewAfter: z.number({ error: 'must be a number from 0 to 1' }).min(0).max(1).default(0.1),
  /**
   * Most sessions held in memory (one not read recently goes first; `0`: none, and no tracking
   * connection). Defaults to `10000`.
   */
  maxCachedSessions: integerOption(0, MAX_ENTRIES, '').default(DEFAULT_ENTRIES),
  /**
   * Longest time a call may take before it fails with `StoreUnavailableError` (express-session
   * then passes it to the app's error handler), in milliseconds (1 to 60000). Defaults to `1500`.
   */
  operationTimeoutMs: integerOption(1, 60_000, ' number of milliseconds').default(1500),
};

/** The schema of `new RedisSessionStore(options)`. */
export const redisSessionStoreOptionsSchema: OptionsSchema<typeof redisSessionStoreShape> =
  z.strictObject(redisSessionStoreShape);

/** Options of `new RedisSessionStore(options)`. */
export type RedisSessionStoreOptions = z.input<typeof redisSessionStoreOptionsSchema>;
