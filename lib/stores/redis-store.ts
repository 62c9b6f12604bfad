// RedisTokenStore: token records in Redis (standalone, Sentinel or Cluster) through node-redis or
// ioredis (the command seam in ./redis/), with compare-and-set writes in Lua, owner-only locks, a
// deadline on every call and optional AES-256-GCM encryption at rest.
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { hashOpenId, hashSessionId } from '../core/hash';
import type { TokenRecord } from '../core/token-record';
import type {
  DeleteOptions,
  PutOptions,
  TokenStore,
  TokenStoreEvents,
  WindowCount,
} from '../core/token-store';
import { RecordKeyRing } from './encryption';
import {
  decodeRecordPayload,
  encodeRecordPayload,
  frameStoredValue,
  PLAIN_MARK,
  SEALED_DERIVED_MARK,
  SEALED_MARK,
  splitStoredValue,
  versionPrefix,
} from './record-codec';
import { parseOptions } from '../util/parse-options';
import { redisTokenStoreOptionsSchema, type RedisTokenStoreOptions } from './redis-store-options';
import {
  BUMP_GENERATION,
  COUNT_IN_WINDOW,
  DELETE_IF_VERSION,
  EXTEND_IF_OWNER,
  HELD_BACK_MS,
  INDEX_SESSION,
  PUT_IF_VERSION,
  READ_WITH_TTL,
  RELEASE_IF_OWNER,
  type LuaScript,
} from './scripts';
import type { Argument, RedisCommands, Replies } from './redis/commands';
import { KeyTracking } from './redis/key-tracking';
import { redisCommands } from './redis/redis-client';
import { withDeadline } from '../core/with-deadline';
import { RecordCache, type ReadTicket } from './record-cache';
import {
  checkClaimKey,
  checkCount,
  checkExpectedVersion,
  checkPut,
  checkSessionId,
  ttlMilliseconds,
} from './argument-checks';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** While no invalidations arrive, waiters poll at 25–75 ms, jittered so processes spread out. */
const pollDelayMs = (): number => 25 + Math.random() * 50;

/**
 * Token store in Redis, shared by every process of the service.
 *
 * Keys: `<prefix>{<hash of the session id>}:t` holds the record, `…:l` the refresh lock and `…:r`
 * a hold on refreshes (the platform's Retry-After); the hash tag puts them in one Cluster slot and
 * the raw session id never reaches Redis. `<prefix>p:{<hash of the openId>}` indexes a player's
 * sessions (`…:g` counts their log-outs-everywhere); code claims live at `<prefix>c:<key>`,
 * counters (failed entries per client address) at `<prefix>n:<key>`. A
 * record expires with its TTL (its session's lifetime at most), capped by `maxRecordTtlSeconds`;
 * the index expires with its longest-lived record.
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
 * With `encryptionKeys`, a record is sealed with AES-256-GCM under a key derived (HKDF-SHA256, a
 * random 16-byte salt stored in the record) from the first key, its additional authenticated data
 * being its own Redis key and version: a record copied under another session's key does not open,
 * and no single AES key seals more than one record version, so GCM's nonce budget is never near.
 * Under `NODE_ENV=production` a store without `encryptionKeys` is refused unless
 * `allowPlaintextTokens: true` says the app means it. A record that does not open or parse reads as absent and is reported with the
 * `unreadable` event (`{ sessionHash, reason }`). To rotate keys, first deploy the new key in second
 * place everywhere, then move it first; drop the old key after `maxRecordTtlSeconds`.
 * Turning encryption on logs every player out once: records stored in the clear no longer read.
 *
 * Records read are served from this process's memory afterwards, dropped the moment Redis reports
 * their key changed (`recordCache`, one extra connection; not on a Cluster): docs/caching.md.
 */
export class RedisTokenStore extends EventEmitter<TokenStoreEvents> implements TokenStore {
  readonly #redis: RedisCommands;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #maxTtlMs: number;
  readonly #keyRing: RecordKeyRing | undefined;
  /** Records served from memory while Redis's invalidations reach `#invalidation` (docs/caching.md). */
  readonly #cache: RecordCache | undefined;
  readonly #tracking: KeyTracking | undefined;
  /** The cache's reads in flight by session id, for requests that arrive meanwhile to share. */
  readonly #readsInFlight = new Map<
    string,
    { ticket: ReadTicket; read: Promise<TokenRecord | undefined> }
  >();

  constructor(options: RedisTokenStoreOptions) {
    super();
    const config = parseOptions(redisTokenStoreOptionsSchema, options, 'RedisTokenStore');
    this.#redis = redisCommands(config.redis);
    this.#prefix = config.prefix;
    this.#timeoutMs = config.operationTimeoutMs;
    this.#maxTtlMs = config.maxRecordTtlSeconds * 1000;
    this.#keyRing = config.encryptionKeys && new RecordKeyRing(config.encryptionKeys);
    if (
      this.#keyRing === undefined &&
      process.env.NODE_ENV === 'production' &&
      !config.allowPlaintextTokens
    ) {
      throw new TypeError(
        'RedisTokenStore: under NODE_ENV=production `encryptionKeys` is required, so that refresh ' +
          'tokens are not stored in the clear (make a key with `openssl rand -base64 32`). Set ' +
          '`allowPlaintextTokens: true` to store them in the clear anyway.',
      );
    }
    // On a Cluster the keys live on several nodes, each with its own tracking: reads go to Redis.
    if (config.recordCache && this.#redis.topology !== 'cluster') {
      // A record Redis reports changed is not read again until a request asks for it: ioredis
      // says no word (public) of a QUIT under way, and a read written after it breaks that QUIT.
      const cache = new RecordCache(config.recordCacheSize);
      this.#cache = cache;
      this.#tracking = new KeyTracking(this.#redis, this.#prefix, {
        changed: (key) => cache.reported(key),
        allChanged: () => cache.invalidateAll(),
        liveChanged: (live) => cache.setActive(live),
        unavailable: (reason) => this.emit('recordCacheUnavailable', { reason }),
      });
    }
  }

  /** True while records are served from this process's memory (see `recordCache`). */
  get recordCacheActive(): boolean {
    return this.#cache?.active === true;
  }

  /** Closes the connection the record cache opened; the client given is left open. */
  async close(): Promise<void> {
    await this.#tracking?.close();
  }

  /** True when records are stored in the clear (no `encryptionKeys`). */
  get storesPlaintext(): boolean {
    return this.#keyRing === undefined;
  }

  /** Reads the record of a session; `undefined` when there is none or it cannot be read. */
  async get(sessionId: string): Promise<TokenRecord | undefined> {
    checkSessionId(sessionId);
    const cache = this.#cache;
    if (cache?.active === true) {
      // A hit costs no hash, no clock read, no Redis round trip and no decoding; it may also be
      // a known absence (the entry's record is undefined).
      const entry = cache.entryOf(sessionId);
      if (entry !== undefined) return entry.record;
      return this.#readThrough(cache, sessionId);
    }
    const sessionHash = hashSessionId(sessionId);
    const key = this.#recordKey(sessionHash);
    const value = (await this.#run('GET', key, [], 'a read', 'bytes')) as Buffer | null;
    return value === null ? undefined : this.#decode(value, key, sessionHash);
  }

  /**
   * The record held in this process's memory, without a promise (the middleware's fast path);
   * `undefined` when the cache is off or does not hold it (then `get()` reads Redis).
   */
  getCached(sessionId: string, now?: number): TokenRecord | undefined {
    const cache = this.#cache;
    return cache?.active === true ? cache.lookup(sessionId, now) : undefined;
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

  /**
   * A miss: one read of the session's record in flight at a time, which requests arriving while it
   * is in flight share unless a change was reported since it was sent (then they send their own).
   * `afterReport`: the read again of a held record Redis reported changed, which keeps an absence.
   */
  #readThrough(
    cache: RecordCache,
    sessionId: string,
    afterReport = false,
  ): Promise<TokenRecord | undefined> {
    const shared = this.#readsInFlight.get(sessionId);
    if (shared !== undefined && cache.unchangedSince(shared.ticket)) return shared.read;
    const sessionHash = hashSessionId(sessionId);
    const key = this.#recordKey(sessionHash);
    const ticket = cache.beginRead(key);
    const read = this.#readAndCache(cache, sessionId, sessionHash, ticket, afterReport);
    this.#readsInFlight.set(sessionId, { ticket, read });
    const done = (): void => {
      if (this.#readsInFlight.get(sessionId)?.read === read) this.#readsInFlight.delete(sessionId);
    };
    read.then(done, done);
    return read;
  }

  /** The record and its PTTL (so the copy goes when Redis expires the key), cached unless raced. */
  async #readAndCache(
    cache: RecordCache,
    sessionId: string,
    sessionHash: string,
    ticket: ReadTicket,
    keepAbsence: boolean,
  ): Promise<TokenRecord | undefined> {
    const key = ticket.key;
    let record: TokenRecord | undefined;
    let ttlMs: number;
    try {
      const [value, pttl] = (await this.#script(READ_WITH_TTL, key, [], 'bytes')) as [
        Buffer | null,
        number,
      ];
      record = value === null ? undefined : this.#decode(value, key, sessionHash);
      ttlMs = pttl;
    } catch (error) {
      cache.abandonRead(ticket);
      throw error;
    }
    cache.endRead(ticket, sessionId, record, ttlMs, Date.now(), keepAbsence);
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
    const generation = await this.#index(record.openId, sessionHash, ttlMs);
    const expected = options.expectedVersion === null ? '' : versionPrefix(options.expectedVersion);
    const written = await this.#changing(key, () =>
      this.#script(PUT_IF_VERSION, key, [expected, this.#encode(record, key), String(ttlMs)]),
    );
    if (written !== 1) return false;
    // A new login that a logoutPlayer() overtook (its generation moved since the index was
    // written) takes itself back: the log-out may have scanned the index before this record existed.
    if (options.expectedVersion === null) {
      const now = await this.#run('GET', this.#generationKey(record.openId), [], 'a login check');
      if ((now ?? '0') !== generation) {
        await this.delete(sessionId, { expectedVersion: record.version, openId: record.openId });
        return false;
      }
    }
    return true;
  }

  /** Indexes the session under its player until `ttlMs` from now; resolves the logout generation. */
  async #index(openId: string, sessionHash: string, ttlMs: number): Promise<string> {
    const now = Date.now();
    const playerKey = this.#playerKey(openId);
    const generation = await this.#script(
      INDEX_SESSION,
      [playerKey, this.#generationKey(openId)],
      [String(now + ttlMs), sessionHash, String(now)],
    );
    return String(generation);
  }

  /**
   * Deletes the record, with `expectedVersion` only while it still has that version; with
   * `openId`, its entry in the player's index goes too.
   */
  async delete(sessionId: string, options?: DeleteOptions): Promise<boolean> {
    checkSessionId(sessionId);
    const expectedVersion = options?.expectedVersion;
    checkExpectedVersion(expectedVersion);
    const sessionHash = hashSessionId(sessionId);
    const key = this.#recordKey(sessionHash);
    const deleted = await this.#changing(key, () =>
      expectedVersion === undefined
        ? this.#run('DEL', key, [], 'a delete')
        : this.#script(DELETE_IF_VERSION, key, [versionPrefix(expectedVersion)]),
    );
    const openId = options?.openId;
    if (deleted === 1 && typeof openId === 'string' && openId.length > 0) {
      await this.#run('ZREM', this.#playerKey(openId), [sessionHash], 'a delete');
    }
    return deleted === 1;
  }

  /** Takes the session's lock for `ttlMs` (SET NX PX); resolves the owner, `undefined` when held. */
  async acquireLock(sessionId: string, ttlMs: number): Promise<string | undefined> {
    checkSessionId(sessionId);
    const lockTtlMs = ttlMilliseconds(ttlMs);
    const owner = randomBytes(16).toString('base64url');
    const sessionHash = hashSessionId(sessionId);
    const key = this.#lockKey(sessionHash);
    const taken = await this.#run('SET', key, [owner, 'PX', String(lockTtlMs), 'NX'], 'a lock');
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

  /** Gives the lock `ttlMs` more only if `owner` still holds it (owner-checked PEXPIRE). */
  async extendLock(sessionId: string, owner: string, ttlMs: number): Promise<boolean> {
    checkSessionId(sessionId);
    if (typeof owner !== 'string' || owner.length === 0) return false;
    const extended = await this.#script(EXTEND_IF_OWNER, this.#lockKey(hashSessionId(sessionId)), [
      owner,
      String(ttlMilliseconds(ttlMs)),
    ]);
    return extended === 1;
  }

  /** Records that no process may refresh version `version` of this session's record for `ttlMs`. */
  async holdBackRefreshes(sessionId: string, version: number, ttlMs: number): Promise<void> {
    checkSessionId(sessionId);
    checkExpectedVersion(version);
    const key = this.#holdKey(hashSessionId(sessionId));
    const ttl = String(ttlMilliseconds(ttlMs));
    await this.#run('SET', key, [String(version), 'PX', ttl], 'a refresh hold');
  }

  /** Milliseconds left of a hold on `version` set by holdBackRefreshes; 0 when none. */
  async refreshHeldBackMs(sessionId: string, version: number): Promise<number> {
    checkSessionId(sessionId);
    checkExpectedVersion(version);
    const key = this.#holdKey(hashSessionId(sessionId));
    return Number(await this.#script(HELD_BACK_MS, key, [String(version)]));
  }

  /** Gives the record and its index entry `ttlMs` more to live from now, without rewriting it. */
  async touch(sessionId: string, openId: string, ttlMs: number): Promise<boolean> {
    checkSessionId(sessionId);
    const lifetimeMs = Math.min(ttlMilliseconds(ttlMs), this.#maxTtlMs);
    const sessionHash = hashSessionId(sessionId);
    const key = this.#recordKey(sessionHash);
    const extended = await this.#run('PEXPIRE', key, [String(lifetimeMs)], 'a touch');
    if (extended !== 1) return false;
    await this.#index(openId, sessionHash, lifetimeMs);
    return true;
  }

  /** Claims `key` once for `ttlMs` (SET NX PX). Pass a hash (e.g. `hashCode(code)`), not a secret. */
  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    checkClaimKey(key);
    const claimTtlMs = ttlMilliseconds(ttlMs);
    const claimKey = `${this.#prefix}c:${key}`;
    const claimed = await this.#run(
      'SET',
      claimKey,
      ['1', 'PX', String(claimTtlMs), 'NX'],
      'a claim',
    );
    return claimed === 'OK';
  }

  /** Adds `increment` to the counter `key` (one Lua call); its window of `windowMs` opens with its first count. */
  async countInWindow(key: string, increment: 0 | 1, windowMs: number): Promise<WindowCount> {
    const windowLengthMs = checkCount(key, increment, windowMs);
    const [count, resetInMs] = (await this.#script(COUNT_IN_WINDOW, `${this.#prefix}n:${key}`, [
      String(increment),
      String(windowLengthMs),
    ])) as [number, number];
    return { count, resetInMs };
  }

  /** How many live session records the player has; prunes index members whose record is gone. */
  async sessionsOf(openId: string): Promise<number> {
    return (await this.#liveSessions(openId)).length;
  }

  /** Deletes every session record of the player (log out everywhere); resolves how many. */
  async deletePlayer(openId: string): Promise<number> {
    const indexKey = this.#playerKey(openId);
    if (typeof openId === 'string' && openId.length > 0) {
      // First: a login that indexed itself before this bump and writes its record after the scan
      // below sees the new generation and takes itself back (see put).
      await this.#script(BUMP_GENERATION, this.#generationKey(openId), [String(this.#maxTtlMs)]);
    }
    const members = await this.#liveSessions(openId);
    // One DEL per record: on a Cluster the records live in different slots.
    const deleted = await withDeadline(
      Promise.all(
        members.map((hash) => {
          const key = this.#recordKey(hash);
          return this.#changing(key, () => this.#redis.run('DEL', key) as Promise<number>);
        }),
      ),
      this.#timeoutMs,
      'a player logout',
    );
    // Only the members read above leave the index: a login completing meanwhile stays findable.
    if (members.length > 0) {
      await this.#run('ZREM', indexKey, members, 'a player logout');
    }
    return deleted.reduce((sum, count) => sum + count, 0);
  }

  async #liveSessions(openId: string): Promise<string[]> {
    if (typeof openId !== 'string' || openId.length === 0) {
      throw new TypeError('openId must be a non-empty string.');
    }
    const indexKey = this.#playerKey(openId);
    const lookup = async (): Promise<string[]> => {
      const redis = this.#redis;
      await redis.run('ZREMRANGEBYSCORE', indexKey, ['-inf', String(Date.now())]);
      const members = ((await redis.run('ZRANGE', indexKey, ['0', '-1'])) as unknown[]).map(String);
      const exists = await Promise.all(
        members.map((hash) => redis.run('EXISTS', this.#recordKey(hash))),
      );
      const gone = members.filter((_, index) => exists[index] === 0);
      if (gone.length > 0) await redis.run('ZREM', indexKey, gone);
      return members.filter((_, index) => exists[index] === 1);
    };
    return withDeadline(lookup(), this.#timeoutMs, 'a player lookup');
  }

  #playerKey(openId: string): string {
    return `${this.#prefix}p:{${hashOpenId(openId)}}`;
  }

  #generationKey(openId: string): string {
    return `${this.#playerKey(openId)}:g`;
  }

  #holdKey(sessionHash: string): string {
    return `${this.#prefix}{${sessionHash}}:r`;
  }

  #recordKey(sessionHash: string): string {
    return `${this.#prefix}{${sessionHash}}:t`;
  }

  #lockKey(sessionHash: string): string {
    return `${this.#prefix}{${sessionHash}}:l`;
  }

  /** One command on one key, within the deadline; `what` names it in the error. */
  #run(
    command: string,
    key: string,
    args: readonly Argument[],
    what: string,
    replies: Replies = 'text',
  ): Promise<unknown> {
    return withDeadline(this.#redis.run(command, key, args, replies), this.#timeoutMs, what);
  }

  /** A script by EVALSHA (EVAL where the server or Cluster node lacks it), within the deadline. */
  #script(
    script: LuaScript,
    key: string | string[],
    args: Argument[],
    /** `'bytes'`: bulk replies as Buffers (a sealed record is binary), else as strings. */
    replies: Replies = 'text',
  ): Promise<unknown> {
    const keys = typeof key === 'string' ? [key] : key;
    const run = this.#redis.script(script, keys, args, replies);
    return withDeadline(run, this.#timeoutMs, `the ${script.name} script`);
  }

  /** AAD of a sealed record: its key and version, so neither can be swapped under the ciphertext. */
  static #aad(key: string, version: number): Buffer {
    return Buffer.from(`${key}|${version}`, 'utf8');
  }

  #encode(record: TokenRecord, key: string): Buffer {
    const payload = encodeRecordPayload(record);
    if (this.#keyRing === undefined) return frameStoredValue(record.version, PLAIN_MARK, payload);
    const sealed = this.#keyRing.seal(payload, RedisTokenStore.#aad(key, record.version));
    return frameStoredValue(record.version, SEALED_DERIVED_MARK, sealed);
  }

  #decode(value: Buffer, key: string, sessionHash: string): TokenRecord | undefined {
    const frame = splitStoredValue(value);
    if (frame === undefined) return this.#unreadable(sessionHash, 'parse');
    let payload: Buffer;
    if (this.#keyRing === undefined) {
      if (frame.mark !== PLAIN_MARK) {
        const sealed = frame.mark === SEALED_MARK || frame.mark === SEALED_DERIVED_MARK;
        return this.#unreadable(sessionHash, sealed ? 'unknown_key' : 'parse');
      }
      payload = frame.body;
    } else {
      // A record in the clear is refused too: anyone able to write to Redis could plant one.
      const derived = frame.mark === SEALED_DERIVED_MARK;
      if (!derived && frame.mark !== SEALED_MARK) return this.#unreadable(sessionHash, 'decrypt');
      const aad = RedisTokenStore.#aad(key, frame.version);
      const opened = this.#keyRing.open(frame.body, aad, derived);
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
