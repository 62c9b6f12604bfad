// RedisTokenStore: token records in Redis (standalone, Sentinel or Cluster) through ioredis, with
// compare-and-set writes in Lua, owner-only locks, a deadline on every call and optional
// AES-256-GCM encryption at rest.
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { hashOpenId, hashSessionId } from '../core/hash';
import type { TokenRecord } from '../core/token-record';
import type { PutOptions, TokenStore, TokenStoreEvents } from '../core/token-store';
import { RecordKeyRing } from './encryption';
import {
  decodeRecordPayload,
  encodeRecordPayload,
  frameStoredValue,
  PLAIN_MARK,
  SEALED_MARK,
  splitStoredValue,
  versionPrefix,
} from './record-codec';
import { parseOptions } from '../util/parse-options';
import { redisTokenStoreOptionsSchema, type RedisTokenStoreOptions } from './redis-store-options';
import {
  DELETE_IF_VERSION,
  INDEX_SESSION,
  PUT_IF_VERSION,
  RELEASE_IF_OWNER,
  type LuaScript,
} from './scripts';
import { withDeadline } from '../core/with-deadline';
import { RecordCache } from './record-cache';
import { RedisInvalidation } from './redis-invalidation';
import {
  checkClaimKey,
  checkExpectedVersion,
  checkPut,
  checkSessionId,
  ttlMilliseconds,
} from './argument-checks';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** While no invalidations arrive, waiters poll at 25–75 ms, jittered so processes spread out. */
const pollDelayMs = (): number => 25 + Math.random() * 50;

const isNoScriptError = (error: unknown): boolean =>
  error instanceof Error && error.message.startsWith('NOSCRIPT');

/**
 * Token store in Redis, shared by every process of the service.
 *
 * Keys: `<prefix>{<hash of the session id>}:t` holds the record and `…:l` the refresh lock (the
 * hash tag puts both in one Cluster slot; the raw session id never reaches Redis); code claims
 * live at `<prefix>c:<key>`. A record expires with its TTL, capped by `maxRecordTtlSeconds`.
 *
 * Every call fails with `StoreUnavailableError` after `operationTimeoutMs`, whatever the client
 * does. So that the client itself does not pile up commands or give up for good while Redis is
 * away, create it with:
 * - `maxRetriesPerRequest: 1` — the default (20) keeps each command queued across 20 reconnects;
 * - `commandTimeout: 1000` — fails a command a stalled (not disconnected) Redis never answers;
 * - `retryStrategy: (times) => Math.min(times * 200, 2000)` — keeps reconnecting (never return
 *   `null`, which stops for good), so the store works again by itself when Redis is back;
 * - `connectTimeout: 2000`; and `enableOfflineQueue: false` if the app waits for the client's
 *   `ready` event before serving, so calls fail at once while disconnected.
 * For `new Cluster(nodes, { redisOptions: { … } })` put these in `redisOptions`; for Sentinel
 * add them beside `sentinels`. The store never closes the client.
 *
 * With `encryptionKeys`, a record is sealed with AES-256-GCM under the first key, its additional
 * authenticated data being its own Redis key and version: a record copied under another session's
 * key does not open. A record that does not open or parse reads as absent and is reported with the
 * `unreadable` event (`{ sessionHash, reason }`). To rotate keys, first deploy the new key in second
 * place everywhere, then move it first; drop the old key after `maxRecordTtlSeconds`.
 * Turning encryption on logs every player out once: records stored in the clear no longer read.
 *
 * Records read are served from this process's memory afterwards, dropped the moment Redis reports
 * their key changed (`recordCache`, one extra connection; not on a Cluster): docs/caching.md.
 */
export class RedisTokenStore extends EventEmitter<TokenStoreEvents> implements TokenStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #maxTtlMs: number;
  readonly #keyRing: RecordKeyRing | undefined;
  /** Records served from memory while Redis's invalidations reach `#invalidation` (docs/caching.md). */
  readonly #cache: RecordCache | undefined;
  readonly #invalidation: RedisInvalidation | undefined;

  constructor(options: RedisTokenStoreOptions) {
    super();
    const config = parseOptions(redisTokenStoreOptionsSchema, options, 'RedisTokenStore');
    // A Cluster has the same command methods as a Redis client; one type keeps the calls simple.
    this.#redis = config.redis as Redis;
    this.#prefix = config.prefix;
    this.#timeoutMs = config.operationTimeoutMs;
    this.#maxTtlMs = config.maxRecordTtlSeconds * 1000;
    this.#keyRing = config.encryptionKeys && new RecordKeyRing(config.encryptionKeys);
    // On a Cluster the keys live on several nodes, each with its own tracking: reads go to Redis.
    if (config.recordCache && (config.redis as { isCluster?: boolean }).isCluster !== true) {
      const cache = new RecordCache(config.recordCacheSize);
      const unavailable = (reason: string): void => {
        this.emit('recordCacheUnavailable', { reason });
      };
      try {
        this.#invalidation = new RedisInvalidation(this.#redis, cache, this.#prefix, unavailable);
        this.#cache = cache;
      } catch (error) {
        // The client's options do not make a second connection: direct reads, said once (on the
        // next tick, so that a listener attached right after construction hears it).
        const reason = error instanceof Error ? error.message : String(error);
        process.nextTick(unavailable, reason);
      }
    }
  }

  /** True while records are served from this process's memory (see `recordCache`). */
  get recordCacheActive(): boolean {
    return this.#cache?.active === true;
  }

  /** Closes the connection the record cache opened; the client given is left open. */
  async close(): Promise<void> {
    await this.#invalidation?.close();
  }

  /** Reads the record of a session; `undefined` when there is none or it cannot be read. */
  async get(sessionId: string): Promise<TokenRecord | undefined> {
    checkSessionId(sessionId);
    const cache = this.#cache;
    if (cache?.active === true) {
      // A hit costs no hash, no clock read, no Redis round trip and no decoding.
      const cached = cache.lookup(sessionId);
      if (cached !== undefined) return cached;
      return this.#readThrough(cache, sessionId);
    }
    const sessionHash = hashSessionId(sessionId);
    const key = this.#recordKey(sessionHash);
    const value = await withDeadline(this.#redis.getBuffer(key), this.#timeoutMs, 'a read');
    return value === null ? undefined : this.#decode(value, key, sessionHash);
  }

  /**
   * Resolves once the session's record (or its refresh lock) may have changed, or after
   * `timeoutMs`; while the cache is off, after a short poll interval.
   */
  waitForChange(sessionId: string, timeoutMs: number): Promise<void> {
    checkSessionId(sessionId);
    const cache = this.#cache;
    if (cache?.active !== true) return sleep(Math.min(timeoutMs, pollDelayMs()));
    const sessionHash = hashSessionId(sessionId);
    return cache.waitFor([this.#recordKey(sessionHash), this.#lockKey(sessionHash)], timeoutMs);
  }

  /** A miss: GET and PTTL (so the copy goes when Redis expires the key), cached unless raced. */
  async #readThrough(cache: RecordCache, sessionId: string): Promise<TokenRecord | undefined> {
    const sessionHash = hashSessionId(sessionId);
    const key = this.#recordKey(sessionHash);
    const ticket = cache.beginRead(key);
    let record: TokenRecord | undefined;
    let ttlMs: number;
    try {
      const [value, pttl] = await withDeadline(
        Promise.all([this.#redis.getBuffer(key), this.#redis.pttl(key)]),
        this.#timeoutMs,
        'a read',
      );
      record = value === null ? undefined : this.#decode(value, key, sessionHash);
      ttlMs = pttl;
    } catch (error) {
      cache.abandonRead(ticket);
      throw error;
    }
    cache.endRead(ticket, sessionId, record, ttlMs, Date.now());
    return record;
  }

  /**
   * This process's own write or delete of `key`: dropped before (so no read in flight caches the
   * old value) and after (so nothing read meanwhile stays), before Redis's own message arrives.
   */
  async #changing<T>(key: string, change: () => Promise<T>): Promise<T> {
    this.#cache?.invalidate(key);
    try {
      return await change();
    } finally {
      this.#cache?.invalidate(key);
    }
  }

  /** Compare-and-set write; see TokenStore.put. The TTL is capped by `maxRecordTtlSeconds`. */
  async put(sessionId: string, record: TokenRecord, options: PutOptions): Promise<boolean> {
    checkSessionId(sessionId);
    checkPut(record, options);
    const ttlMs = Math.min(ttlMilliseconds(options.ttlMs), this.#maxTtlMs);
    const sessionHash = hashSessionId(sessionId);
    const key = this.#recordKey(sessionHash);
    // The player's index is written first: a member whose record never got written is pruned
    // later, while a record missing from the index would escape logoutPlayer().
    const now = Date.now();
    await this.#script(INDEX_SESSION, this.#playerKey(record.openId), [
      String(now + ttlMs),
      sessionHash,
      String(now),
    ]);
    const expected = options.expectedVersion === null ? '' : versionPrefix(options.expectedVersion);
    const written = await this.#changing(key, () =>
      this.#script(PUT_IF_VERSION, key, [expected, this.#encode(record, key), String(ttlMs)]),
    );
    return written === 1;
  }

  /** Deletes the record, with `expectedVersion` only while it still has that version. */
  async delete(sessionId: string, options?: { expectedVersion?: number }): Promise<boolean> {
    checkSessionId(sessionId);
    const expectedVersion = options?.expectedVersion;
    checkExpectedVersion(expectedVersion);
    const key = this.#recordKey(hashSessionId(sessionId));
    const deleted = await this.#changing(key, () =>
      expectedVersion === undefined
        ? withDeadline(this.#redis.del(key), this.#timeoutMs, 'a delete')
        : this.#script(DELETE_IF_VERSION, key, [versionPrefix(expectedVersion)]),
    );
    return deleted === 1;
  }

  /** Takes the session's lock for `ttlMs` (SET NX PX); resolves the owner, `undefined` when held. */
  async acquireLock(sessionId: string, ttlMs: number): Promise<string | undefined> {
    checkSessionId(sessionId);
    const lockTtlMs = ttlMilliseconds(ttlMs);
    const owner = randomBytes(16).toString('base64url');
    const sessionHash = hashSessionId(sessionId);
    const key = this.#lockKey(sessionHash);
    const taken = await withDeadline(
      this.#redis.set(key, owner, 'PX', lockTtlMs, 'NX'),
      this.#timeoutMs,
      'a lock',
    );
    if (taken !== 'OK') return undefined;
    // The holder re-reads the record before refreshing: from Redis, not from a copy that another
    // process's message (sent before this lock was free) may not have removed yet.
    this.#cache?.invalidate(this.#recordKey(sessionHash));
    return owner;
  }

  /** Releases the session's lock only if `owner` still holds it. */
  async releaseLock(sessionId: string, owner: string): Promise<boolean> {
    checkSessionId(sessionId);
    if (typeof owner !== 'string' || owner.length === 0) return false;
    const released = await this.#script(RELEASE_IF_OWNER, this.#lockKey(hashSessionId(sessionId)), [
      owner,
    ]);
    return released === 1;
  }

  /** Claims `key` once for `ttlMs` (SET NX PX). Pass a hash (e.g. `hashCode(code)`), not a secret. */
  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    checkClaimKey(key);
    const claimTtlMs = ttlMilliseconds(ttlMs);
    const claimed = await withDeadline(
      this.#redis.set(`${this.#prefix}c:${key}`, '1', 'PX', claimTtlMs, 'NX'),
      this.#timeoutMs,
      'a claim',
    );
    return claimed === 'OK';
  }

  /** How many live session records the player has; prunes index members whose record is gone. */
  async sessionsOf(openId: string): Promise<number> {
    return (await this.#liveSessions(openId)).length;
  }

  /** Deletes every session record of the player (log out everywhere); resolves how many. */
  async deletePlayer(openId: string): Promise<number> {
    const indexKey = this.#playerKey(openId);
    const members = await this.#liveSessions(openId);
    // One DEL per record: on a Cluster the records live in different slots.
    const deleted = await withDeadline(
      Promise.all(
        members.map((hash) => {
          const key = this.#recordKey(hash);
          return this.#changing(key, () => this.#redis.del(key));
        }),
      ),
      this.#timeoutMs,
      'a player logout',
    );
    // Only the members read above leave the index: a login completing meanwhile stays findable.
    if (members.length > 0) {
      await withDeadline(
        this.#redis.zrem(indexKey, ...members),
        this.#timeoutMs,
        'a player logout',
      );
    }
    return deleted.reduce((sum, count) => sum + count, 0);
  }

  async #liveSessions(openId: string): Promise<string[]> {
    if (typeof openId !== 'string' || openId.length === 0) {
      throw new TypeError('openId must be a non-empty string.');
    }
    const indexKey = this.#playerKey(openId);
    const lookup = async (): Promise<string[]> => {
      await this.#redis.zremrangebyscore(indexKey, '-inf', Date.now());
      // The stop index as a string: ioredis 6's types take no number there.
      const members = await this.#redis.zrange(indexKey, 0, '-1');
      const exists = await Promise.all(
        members.map((hash) => this.#redis.exists(this.#recordKey(hash))),
      );
      const gone = members.filter((_, index) => exists[index] === 0);
      if (gone.length > 0) await this.#redis.zrem(indexKey, ...gone);
      return members.filter((_, index) => exists[index] === 1);
    };
    return withDeadline(lookup(), this.#timeoutMs, 'a player lookup');
  }

  #playerKey(openId: string): string {
    return `${this.#prefix}p:{${hashOpenId(openId)}}`;
  }

  #recordKey(sessionHash: string): string {
    return `${this.#prefix}{${sessionHash}}:t`;
  }

  #lockKey(sessionHash: string): string {
    return `${this.#prefix}{${sessionHash}}:l`;
  }

  /** EVALSHA, loading the script with EVAL when this server (or Cluster node) does not have it. */
  #script(script: LuaScript, key: string, args: Array<string | Buffer>): Promise<unknown> {
    const run = async (): Promise<unknown> => {
      try {
        return await this.#redis.evalsha(script.sha, 1, key, ...args);
      } catch (error) {
        if (!isNoScriptError(error)) throw error;
        return await this.#redis.eval(script.source, 1, key, ...args);
      }
    };
    return withDeadline(run(), this.#timeoutMs, `the ${script.name} script`);
  }

  /** AAD of a sealed record: its key and version, so neither can be swapped under the ciphertext. */
  static #aad(key: string, version: number): Buffer {
    return Buffer.from(`${key}|${version}`, 'utf8');
  }

  #encode(record: TokenRecord, key: string): Buffer {
    const payload = encodeRecordPayload(record);
    if (this.#keyRing === undefined) return frameStoredValue(record.version, PLAIN_MARK, payload);
    const sealed = this.#keyRing.seal(payload, RedisTokenStore.#aad(key, record.version));
    return frameStoredValue(record.version, SEALED_MARK, sealed);
  }

  #decode(value: Buffer, key: string, sessionHash: string): TokenRecord | undefined {
    const frame = splitStoredValue(value);
    if (frame === undefined) return this.#unreadable(sessionHash, 'parse');
    let payload: Buffer;
    if (this.#keyRing === undefined) {
      if (frame.mark !== PLAIN_MARK) {
        return this.#unreadable(sessionHash, frame.mark === SEALED_MARK ? 'unknown_key' : 'parse');
      }
      payload = frame.body;
    } else {
      // A record in the clear is refused too: anyone able to write to Redis could plant one.
      if (frame.mark !== SEALED_MARK) return this.#unreadable(sessionHash, 'decrypt');
      const opened = this.#keyRing.open(frame.body, RedisTokenStore.#aad(key, frame.version));
      if ('failure' in opened) return this.#unreadable(sessionHash, opened.failure);
      payload = opened.plaintext;
    }
    return decodeRecordPayload(payload, frame.version) ?? this.#unreadable(sessionHash, 'parse');
  }

  #unreadable(sessionHash: string, reason: TokenStoreEvents['unreadable'][0]['reason']): undefined {
    this.emit('unreadable', { sessionHash, reason });
    return undefined;
  }
}
