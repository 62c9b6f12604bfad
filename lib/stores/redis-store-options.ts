// Options of RedisTokenStore: one strict schema, parsed once at construction (by parse-options.ts).
import { z } from 'zod';
import type { Cluster, Redis } from 'ioredis';
import { decodeEncryptionKey, KEY_ID_PATTERN } from './encryption';

/** Duck-typed so that a second copy of ioredis in node_modules (or v6) is accepted too. */
const isIoredisClient = (value: unknown): value is Redis | Cluster =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Redis).evalsha === 'function' &&
  typeof (value as Redis).getBuffer === 'function' &&
  typeof (value as Redis).set === 'function';

const encryptionKeySchema = z.strictObject({
  id: z.string().regex(KEY_ID_PATTERN, {
    error: 'must be 1–32 characters of A–Z, a–z, 0–9, ".", "_" or "-"',
  }),
  key: z.custom<Buffer | string>((value) => decodeEncryptionKey(value) !== undefined, {
    error:
      "must be exactly 32 bytes, as a Buffer or a base64 string (e.g. crypto.randomBytes(32).toString('base64'))",
  }),
});

/** The schema of {@link RedisTokenStoreOptions}. */
export const redisTokenStoreOptionsSchema = z.strictObject({
  /**
   * The ioredis client: `new Redis(…)` (standalone or Sentinel) or `new Cluster(…)`. The store
   * never closes it. See RedisTokenStore for the client options the request path needs.
   */
  redis: z.custom<Redis | Cluster>(isIoredisClient, {
    error: 'must be an ioredis client (`new Redis(…)` or `new Cluster(…)`)',
  }),
  /** Prepended to every key; no `{` or `}` (they would break the Cluster hash tag). Defaults to `'epl:'`. */
  prefix: z
    .string()
    .regex(/^[^{}]*$/, { error: 'must not contain "{" or "}"' })
    .default('epl:'),
  /**
   * Longest time a store call may take before it fails with `StoreUnavailableError`, in
   * milliseconds. Defaults to `1500`.
   */
  operationTimeoutMs: z.number().int().min(1).max(60_000).default(1500),
  /** Cap of a record's time to live, in seconds. Defaults to 90 days (`7776000`). */
  maxRecordTtlSeconds: z
    .number()
    .int()
    .min(1)
    .default(90 * 24 * 60 * 60),
  /**
   * Serve token records from this process's memory, kept coherent by Redis itself
   * (server-assisted client-side caching: `CLIENT TRACKING` in BCAST mode on `prefix`, on one
   * extra connection the store opens with `redis.duplicate()`): a record changed or deleted
   * anywhere is dropped here as soon as Redis says so, and while that connection is down every read
   * goes to Redis. On a Cluster, or where the server refuses `CLIENT TRACKING`, every read goes to
   * Redis. `false` reads every record from Redis and opens no extra connection. See
   * docs/caching.md. Defaults to `true`.
   */
  recordCache: z.boolean().default(true),
  /**
   * Most records the cache holds in this process (about 1 KB each); when full, one not read
   * recently goes first. Defaults to `10000`.
   */
  recordCacheSize: z.number().int().min(1).max(10_000_000).default(10_000),
  /**
   * Turns encryption at rest on. The first key seals new writes; every key opens records, so a new
   * key goes first and the old one stays second until records have been rewritten or expired.
   * Defaults to none (records stored in the clear).
   */
  encryptionKeys: z
    .array(encryptionKeySchema)
    .min(1, { error: 'must hold at least one key when given' })
    .refine((keys) => new Set(keys.map((key) => key.id)).size === keys.length, {
      error: 'must not repeat a key id',
    })
    .optional(),
});

/** Options of RedisTokenStore. */
export type RedisTokenStoreOptions = z.input<typeof redisTokenStoreOptionsSchema>;

/** RedisTokenStore options after parsing, defaults applied. */
export type RedisTokenStoreConfig = z.output<typeof redisTokenStoreOptionsSchema>;
