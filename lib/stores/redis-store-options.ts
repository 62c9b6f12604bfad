// Options of RedisTokenStore: one strict schema, documented field by field, parsed once.
import { z } from 'zod';
import { integerOption, type OptionsSchema } from '../util/parse-options';
import { encryptionKeysSchema } from './encryption-keys-schema';
import { isRedisClient, type RedisClient } from '../redis/redis-client';
import { DEFAULT_ENTRIES, MAX_ENTRIES } from '../caching/bounds';

const redisTokenStoreShape = {
  /**
   * The Redis client, either library, RESP2 or RESP3:
   * - node-redis 5 or 6 (`redis`): `createClient()`, `createCluster()` or `createSentinel()`;
   * - ioredis 5 or 6: `new Redis(…)` (standalone, or Sentinel with `sentinels`) or `new Cluster(…)`.
   * Connected (node-redis: after `await client.connect()`). The store never closes it. See
   * RedisTokenStore for the client options the request path needs. Required.
   */
  redis: z.custom<RedisClient>(isRedisClient, {
    error:
      "must be a node-redis client (`createClient()`, `createCluster()` or `createSentinel()` from 'redis' 5 or 6) " +
      "or an ioredis client (`new Redis(…)` or `new Cluster(…)` from 'ioredis' 5 or 6)",
  }),
  /** Prepended to every key; no `{` or `}` (they would break the Cluster hash tag). Defaults to `'epl:'`. */
  prefix: z
    .string({ error: 'must be a string without "{" or "}"' })
    .regex(/^[^{}]*$/)
    .default('epl:'),
  /**
   * Longest time a store call may take before it fails with `StoreUnavailableError`, in
   * milliseconds (1 to 60000). Defaults to `1500`.
   */
  operationTimeoutMs: integerOption(1, 60_000, ' number of milliseconds').default(1500),
  /**
   * Where express-session's sessions are when a store of their own keeps them on this same client
   * (connect-redis: give it the same `{ client, prefix }`): a new login then waits for a replica to
   * hold its session as well as its record (`durability`). `client` must be `redis`; `prefix`
   * defaults to connect-redis's `'sess:'`. Leave it out with `RedisSessionStore` (it says where its
   * sessions are itself) or sessions kept elsewhere. Defaults to none.
   */
  sessions: z
    .strictObject({
      client: z.custom<RedisClient>(isRedisClient, {
        error: 'must be the client given as `redis`',
      }),
      prefix: z.string({ error: 'must be a string' }).default('sess:'),
    })
    .optional(),
  /** Cap of a record's time to live, in seconds. Defaults to 90 days (`7776000`). */
  maxRecordTtlSeconds: z
    .number({ error: 'must be an integer number of seconds, at least 1' })
    .int()
    .min(1)
    .default(90 * 24 * 60 * 60),
  /**
   * Turns encryption at rest on. The first key seals new writes; every key opens records, so a new
   * key goes first and the old one stays second until records have been rewritten or expired.
   * Keys that are obviously not random (one byte repeated, few distinct bytes) are refused.
   * Defaults to none (records stored in the clear), which `NODE_ENV=production` refuses unless
   * `allowPlaintextTokens` is `true`.
   */
  encryptionKeys: encryptionKeysSchema.optional(),
  /**
   * Serve token records from this process's memory, kept coherent by Redis itself (server-assisted
   * client-side caching: `CLIENT TRACKING` in BCAST mode on `prefix`, on one extra connection the
   * store opens with `redis.duplicate()`, on a Cluster one per master): a record changed or deleted
   * anywhere is dropped here as soon as Redis says so, and while that connection (on a Cluster, any
   * master's) is down every read goes to Redis. Where the server refuses `CLIENT TRACKING`, or on
   * node-redis 5's Sentinel, every read goes to Redis. `false` reads every record from Redis and
   * opens no extra connection. See docs/caching.md. Defaults to `true`.
   */
  recordCache: z.boolean({ error: 'must be true or false' }).default(true),
  /**
   * Most records the cache holds in this process (about 1 KB each); when full, one not read
   * recently goes first. Defaults to `10000`.
   */
  recordCacheSize: integerOption(1, MAX_ENTRIES, '').default(DEFAULT_ENTRIES),
  /**
   * `true`: store refresh and access tokens in the clear even under `NODE_ENV=production` (for an
   * app whose Redis is itself encrypted and access-controlled). Defaults to `false`.
   */
  allowPlaintextTokens: z.boolean({ error: 'must be true or false' }).default(false),
  /**
   * Durable before answered (docs/durability.md): a refresh's new record, a new login and a
   * deletion are acknowledged by `replicas` replicas (at most the connected ones) before the
   * player is answered, waiting at most `timeoutMs` (then the player is answered and the write is
   * on the primary alone; a logout is answered 503). The waits run on connections of their own;
   * where the primary has no replica there is nothing to wait for. A refreshed record or a deletion
   * whose wait fails or times out is kept in memory until a replica holds it, and written again on
   * the new primary if the old one dies first. `false` waits for nothing. Defaults to
   * `{ replicas: 1, timeoutMs: 2000 }`.
   */
  durability: z
    .union(
      [
        z.literal(false),
        z.strictObject({
          replicas: integerOption(1, 16, '').default(1),
          timeoutMs: integerOption(1, 60_000, ' number of milliseconds').default(2000),
        }),
      ],
      {
        error: 'must be false or { replicas: 1–16, timeoutMs: 1–60000 } (each optional)',
      },
    )
    .default({ replicas: 1, timeoutMs: 2000 }),
};

/** The schema of `new RedisTokenStore(options)`. */
export const redisTokenStoreOptionsSchema: OptionsSchema<typeof redisTokenStoreShape> =
  z.strictObject(redisTokenStoreShape);

/** Options of `new RedisTokenStore(options)`. */
export type RedisTokenStoreOptions = z.input<typeof redisTokenStoreOptionsSchema>;
