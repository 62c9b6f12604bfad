// RedisTokenStore: token records in Redis (standalone, Sentinel or Cluster) through node-redis or
// ioredis (the command seam in ./redis/), with compare-and-set writes in Lua, owner-only locks, a
// deadline on every call and optional AES-256-GCM encryption at rest.
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { hashOpenId } from '../core/hash';
import { playerKeyOf } from '../core/player-key';
import { invalidOption } from '../errors';
import type { TokenRecord } from '../core/token-record';
import type {
  DeleteOptions,
  Durability,
  EntryBegin,
  EntryBeginning,
  EntryStop,
  EntryChecks,
  LoginWrite,
  LoginWrites,
  OneTimeCounters,
  PlayerLogin,
  PutOptions,
  RecordChanges,
  RecordRead,
  RefreshLocks,
  StoreEngine,
  TokenRecords,
  UnreadableReason,
  WindowCount,
} from '../core/store-engine';
import { SESSION_REDIS_KEYS, STORE_ENGINE, type SessionRedisKeys } from '../core/store-engine';
import type { StorePutOptions, StoredValue, TokenStore } from '../core/token-store';
import { OWN_KEY_RING, RecordKeyRing } from './encryption';
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
import { checkEntryBegin } from '../core/entry-begin';
import { redisTokenStoreOptionsSchema, type RedisTokenStoreOptions } from './redis-store-options';
import {
  BEGIN_ENTRY,
  COUNT_IN_WINDOW,
  DELETE_IF_VERSION,
  EXTEND_IF_OWNER,
  HELD_BACK_MS,
  INDEX_SESSION,
  PUT_IF_VERSION,
  PUT_LOGIN,
  PUT_NEW_LOGIN,
  RAISE_LOGOUT,
  READ_WITH_TTL,
  RELEASE_IF_OWNER,
  type LuaScript,
} from './scripts';
import { withDeadline } from './redis/with-deadline';
import { CachedRecords, type TrackedRecords } from './caching/cached-records';
import type { TrackedCache } from './caching/tracked-cache';
import { hashTag, type Argument, type RedisCommands, type Replies } from './redis/commands';
import type { KeyTracker, UnavailableBy } from './caching/key-tracking';
import { trackKeys } from './caching/cluster-key-tracking';
import { redisCommands } from './redis/redis-client';
import type { ReplicaWaitOutcome } from './durability/replica-acks';
import type { ReassertOutcome } from './durability/kept-writes';
import { REASSERT_RECORD } from './durability/reassert-script';
import { StoreDurability } from './durability/store-durability';
import {
  checkClaimKey,
  checkCount,
  checkExpectedVersion,
  checkOpenId,
  checkPut,
  checkSessionKey,
  ttlMilliseconds,
} from '../core/engine-arguments';

/** Events of a RedisTokenStore. */
export interface RedisTokenStoreEvents {
  /**
   * Keys cannot be tracked, so records are read from Redis each time. `by`: Redis refused client
   * tracking (`refused`), accepted it but sends no reports (`silent`), or the Redis client has no
   * way to a tracking connection (`client`).
   */
  recordCacheUnavailable: [{ reason: string; by: UnavailableBy }];
  /** This client cannot have connections of its own for WAIT: writes are not waited for. */
  durabilityUnavailable: [{ reason: string }];
  /** A wait for replicas ended (see `durability`). */
  replicaWait: [{ outcome: ReplicaWaitOutcome; durationMs: number }];
  /** A refreshed record or a deletion kept through a failover was settled on the new primary. */
  reassert: [{ outcome: ReassertOutcome }];
}

const ABSENT: RecordRead = Object.freeze({ status: 'absent' });
const unreadable = (reason: UnreadableReason): RecordRead => ({ status: 'unreadable', reason });

/**
 * Token store in Redis, shared by every process of the service.
 *
 * Keys: `<prefix>{<hash of the session id>}:t` holds the record, `…:l` the refresh lock and `…:r`
 * a hold on refreshes (the platform's Retry-After); the hash tag puts them in one Cluster slot and
 * the raw session id never reaches Redis. `<prefix>p:{<hash of the openId>}` indexes a player's
 * sessions (`…:o` holds the log-out generation at which they were last logged out everywhere,
 * `<prefix>logouts` counts those log-outs); code claims live at `<prefix>c:<key>`,
 * counters (failed entries per client address) at `<prefix>n:<key>`. The session key is the
 * caller's hash of the session id (`hashSessionId`). A record expires with its TTL (its session's
 * lifetime at most), capped by `maxRecordTtlSeconds`; the index expires with its longest-lived
 * record.
 *
 * Every call fails with `StoreUnavailableError` after `operationTimeoutMs`, whatever the client
 * does. So that the client itself does not pile up commands or give up for good while Redis is
 * away (and so that the session store on the same client fails fast too), create it with:
 * - node-redis: `socket: { connectTimeout: 2000, socketTimeout: 1500, reconnectStrategy: (n) =>
 *   Math.min(n * 50, 500) }`, `pingInterval: 500` and `disableOfflineQueue: true`. Its
 *   `commandOptions.timeout` stops only a command not yet written; a stalled server is noticed by
 *   the socket's inactivity timeout, which the pings keep from firing on an idle connection.
 *   For `createCluster` put the socket options in `defaults`; for `createSentinel` in
 *   `nodeClientOptions`.
 * - ioredis: `maxRetriesPerRequest: 1` (the default 20 keeps each command queued across 20
 *   reconnects), `commandTimeout: 1000` (fails a command a stalled Redis never answers),
 *   `retryStrategy: (times) => Math.min(times * 200, 2000)` (never `null`, which stops for good),
 *   `connectTimeout: 2000`, and `enableOfflineQueue: false` if the app waits for `ready` before
 *   serving. For `new Cluster(nodes, { redisOptions: { … } })` put these in `redisOptions`; for
 *   Sentinel beside `sentinels`.
 * The store never closes the client.
 *
 * With `encryptionKeys`, a record is sealed with AES-256-GCM under a key derived (HKDF-SHA256, a
 * random 16-byte salt stored in the record) from the first key, its additional authenticated data
 * being its own Redis key and version: a record copied under another session's key does not open,
 * and no single AES key seals more than one record version, so GCM's nonce budget is never near.
 * Under `NODE_ENV=production` a store without `encryptionKeys` is refused unless
 * `allowPlaintextTokens: true` says the app means it. To rotate keys, first deploy the new key in second
 * place everywhere, then move it first; drop the old key after `maxRecordTtlSeconds`.
 * Turning encryption on logs every player out once: records stored in the clear no longer read.
 * A record that does not open or parse reads as `unreadable` (never as absent): the request gets
 * 401 and keeps its session, which a process holding the key can still serve.
 *
 * Records read are served from this process's memory afterwards, dropped the moment Redis reports
 * their key changed (`recordCache`: one extra connection, ioredis two; on a Cluster as many per
 * master, and memory serves only while every master's tracking is live): docs/caching.md.
 */
export class RedisTokenStore
  extends EventEmitter<RedisTokenStoreEvents>
  implements TokenStore, StoreEngine
{
  // The engine the package works with (core/store-engine.ts): its own parts, with their fast paths
  // (Lua, the entry's one round trip, the record cache); the public contract's methods below are
  // what the contract suite checks, for a store like any other.
  /** Token records and the player index; served from memory when the record cache is on. */
  readonly records: TokenRecords;
  readonly locks: RefreshLocks;
  readonly counters: OneTimeCounters;
  /** Present with the record cache: Redis's invalidations, reliable while the cache is active. */
  readonly changes: RecordChanges | undefined;
  /** An entry's checks in one script; absent on a Cluster, where their keys are on several nodes. */
  readonly entries: EntryChecks | undefined;
  /** Writes that wait for a replica (`durability`, docs/durability.md); absent when off. */
  readonly durability: Durability | undefined;
  /** A new login's writes in one script; absent on a Cluster, where their keys are on several nodes. */
  readonly logins: LoginWrites | undefined;

  readonly #redis: RedisCommands;
  /** The client the app gave, to know a session store on the same one. */
  readonly #client: object;
  readonly #prefix: string;
  /** Where another session store keeps sessions on this client (the `sessions` option). */
  readonly #sessionPrefix: string | undefined;
  readonly #timeoutMs: number;
  readonly #maxTtlMs: number;
  readonly #keyRing: RecordKeyRing | undefined;
  /** Records served from memory while Redis's reports reach `#tracking` (docs/caching.md). */
  readonly #cache: TrackedCache<RecordRead> | undefined;
  readonly #tracking: KeyTracker | undefined;
  /** Durability through a failover (docs/durability.md); absent when off or unavailable. */
  readonly #durable: StoreDurability | undefined;

  constructor(options: RedisTokenStoreOptions) {
    super();
    const config = parseOptions(redisTokenStoreOptionsSchema, options, 'RedisTokenStore');
    if (config.sessions !== undefined && config.sessions.client !== config.redis) {
      throw invalidOption(
        'RedisTokenStore: `sessions.client` must be the client given as `redis` (the wait for a replica runs on its server); leave `sessions` out for sessions kept elsewhere.',
        'sessions.client',
      );
    }
    const redis = redisCommands(config.redis);
    this.#client = config.redis;
    const link = config.durability === false ? undefined : redis.replicaLink();
    if (typeof link === 'string') {
      // Told once the app can listen (platformLogin() subscribes its logger at creation).
      queueMicrotask(() => this.emit('durabilityUnavailable', { reason: link }));
    } else if (link !== undefined && config.durability !== false) {
      this.#durable = new StoreDurability({
        redis,
        link,
        settings: config.durability,
        reassert: (sessionKey, record, replaced, ttlMs) => {
          const key = this.#recordKey(sessionKey);
          return this.#script(REASSERT_RECORD, key, [
            String(replaced),
            String(record.version),
            this.#encode(record, key),
            String(ttlMs),
          ]).then(Number);
        },
        redelete: (sessionKey) => this.#run('DEL', this.#recordKey(sessionKey), [], 'a delete'),
        markKey: (key) => `${this.#prefix}{${hashTag(key)}}:w`,
        recordKey: (sessionKey) => this.#recordKey(sessionKey),
        holds: (key, version) => this.#holds(key, version),
        sessionRedisKey: (store, sid) => this.#sessionRedisKey(store, sid),
        onWait: (outcome, durationMs) => this.emit('replicaWait', { outcome, durationMs }),
        onReassert: (outcome) => this.emit('reassert', { outcome }),
      });
    }
    this.durability = this.#durable?.engine;
    this.#redis = this.#durable?.redis ?? redis;
    this.#prefix = config.prefix;
    this.#sessionPrefix = config.sessions?.prefix;
    this.#timeoutMs = config.operationTimeoutMs;
    this.#maxTtlMs = config.maxRecordTtlSeconds * 1000;
    this.#keyRing = config.encryptionKeys && new RecordKeyRing(config.encryptionKeys);
    if (
      this.#keyRing === undefined &&
      process.env.NODE_ENV === 'production' &&
      !config.allowPlaintextTokens
    ) {
      throw invalidOption(
        'RedisTokenStore: under NODE_ENV=production `encryptionKeys` is required, so that refresh ' +
          'tokens are not stored in the clear (make a key with `openssl rand -base64 32`). Set ' +
          '`allowPlaintextTokens: true` to store them in the clear anyway.',
        'encryptionKeys',
      );
    }
    const direct: TrackedRecords = {
      get: (sessionKey) => this.#get(sessionKey),
      put: (sessionKey, record, putOptions) => this.#put(sessionKey, record, putOptions),
      delete: (sessionKey, deleteOptions) => this.#delete(sessionKey, deleteOptions),
      renew: (sessionKey, openId, ttlMs) => this.#renew(sessionKey, openId, ttlMs),
      loginsOf: (openId) => this.#loginsOf(openId),
      deletePlayer: (openId) => this.#deletePlayer(openId),
      loginGeneration: () => this.#loginGeneration(),
      keyOf: (sessionKey) => this.#recordKey(sessionKey),
      readWithTtl: (sessionKey) => this.#readWithTtl(sessionKey),
    };
    this.locks = {
      acquire: (sessionKey, ttlMs) => this.#acquire(sessionKey, ttlMs),
      extend: (sessionKey, owner, ttlMs) => this.#extend(sessionKey, owner, ttlMs),
      release: (sessionKey, owner) => this.#release(sessionKey, owner),
      hold: (sessionKey, version, ttlMs) => this.#hold(sessionKey, version, ttlMs),
      heldMs: (sessionKey, version) => this.#heldMs(sessionKey, version),
    };
    this.counters = {
      claimOnce: (key, ttlMs) => this.#claimOnce(key, ttlMs),
      countInWindow: (key, increment, windowMs) => this.#countInWindow(key, increment, windowMs),
    };
    this.entries =
      this.#redis.topology === 'cluster'
        ? undefined
        : { begin: (entry) => this.#beginEntry(entry) };
    const client: object = config.redis;
    this.logins =
      this.#redis.topology === 'cluster'
        ? undefined
        : {
            put: (write) => this.#putNewLogin(write),
            sharesClient: (other) => other === client,
          };
    let records: TokenRecords = direct;
    let changes: RecordChanges | undefined;
    // On a Cluster the keys live on several nodes: one tracking per master (caching/cluster-key-tracking.ts).
    if (config.recordCache) {
      const cached = new CachedRecords(direct, config.recordCacheSize);
      const cache = cached.cache;
      this.#tracking = trackKeys(this.#redis, this.#prefix, {
        ...cache.listener,
        unavailable: (reason, by) => this.emit('recordCacheUnavailable', { reason, by }),
      });
      this.#cache = cache;
      records = cached;
      const recordKey = (sessionKey: string): string => this.#recordKey(sessionKey);
      const lockKey = (sessionKey: string): string => this.#lockKey(sessionKey);
      changes = {
        watch(sessionKey, onChange) {
          checkSessionKey(sessionKey);
          return cache.watch([recordKey(sessionKey), lockKey(sessionKey)], onChange);
        },
        get live() {
          return cache.active;
        },
      };
    }
    this.records = records;
    this.changes = changes;
  }

  /** The package's engine: this store's own parts. */
  get [STORE_ENGINE](): StoreEngine {
    return this;
  }

  /** The contract's value at `key` (core/token-store.ts), stored as `<version>|<value>`. */
  async get(key: string): Promise<StoredValue | undefined> {
    checkClaimKey(key, 'store key');
    const [stored, ttlMs] = (await this.#script(READ_WITH_TTL, this.#valueKey(key), [])) as [
      string | null,
      number,
    ];
    if (stored === null) return undefined;
    const bar = stored.indexOf('|');
    return {
      value: stored.slice(bar + 1),
      version: Number(stored.slice(0, bar)),
      expiresAt: Date.now() + Math.max(0, ttlMs),
    };
  }

  /** The contract's compare-and-set write (PUT_IF_VERSION): the new version, or `undefined`. */
  async put(key: string, value: string, options: StorePutOptions): Promise<number | undefined> {
    checkClaimKey(key, 'store key');
    if (typeof value !== 'string') throw new TypeError('The value must be a string.');
    const { expectedVersion } = options;
    if (expectedVersion !== null) checkExpectedVersion(expectedVersion);
    const ttlMs = ttlMilliseconds(options.ttlMs);
    const version = (expectedVersion ?? 0) + 1;
    const written = await this.#script(PUT_IF_VERSION, this.#valueKey(key), [
      expectedVersion === null ? '' : versionPrefix(expectedVersion),
      `${versionPrefix(version)}${value}`,
      String(ttlMs),
    ]);
    return written === 1 ? version : undefined;
  }

  /** The contract's delete; with `expectedVersion`, only while the value still has it. */
  async delete(key: string, expectedVersion?: number): Promise<boolean> {
    checkClaimKey(key, 'store key');
    checkExpectedVersion(expectedVersion);
    const valueKey = this.#valueKey(key);
    const deleted =
      expectedVersion === undefined
        ? await this.#run('DEL', valueKey, [], 'a delete')
        : await this.#script(DELETE_IF_VERSION, valueKey, [versionPrefix(expectedVersion)]);
    return deleted === 1;
  }

  /** The contract's renewal: PEXPIRE. */
  async renew(key: string, ttlMs: number): Promise<boolean> {
    checkClaimKey(key, 'store key');
    const lifetimeMs = ttlMilliseconds(ttlMs);
    return (
      (await this.#run('PEXPIRE', this.#valueKey(key), [String(lifetimeMs)], 'a renewal')) === 1
    );
  }

  /** True while records are served from this process's memory (see `recordCache`). */
  get recordCacheActive(): boolean {
    return this.#cache?.active === true;
  }

  /** Closes the connections the record cache and `durability` opened; the client given is left open. */
  async close(): Promise<void> {
    this.#durable?.close();
    await this.#tracking?.close();
  }

  /** True when records are stored in the clear (no `encryptionKeys`). */
  get storesPlaintext(): boolean {
    return this.#keyRing === undefined;
  }

  /** Its ring, for platformLogin() to refuse other `encryptionKeys` than this store's. */
  get [OWN_KEY_RING](): RecordKeyRing | undefined {
    return this.#keyRing;
  }

  /** Reads the record of a session straight from Redis. */
  async #get(sessionKey: string): Promise<RecordRead> {
    checkSessionKey(sessionKey);
    const key = this.#recordKey(sessionKey);
    const value = (await this.#run('GET', key, [], 'a read', 'bytes')) as Buffer | null;
    const read = value === null ? ABSENT : this.#decode(value, key);
    return this.#durable === undefined ? read : this.#durable.overlay(sessionKey, read);
  }

  /** The record and its PTTL (so the cache's copy goes when Redis expires the key). */
  async #readWithTtl(sessionKey: string): Promise<{ read: RecordRead; ttlMs: number }> {
    checkSessionKey(sessionKey);
    const key = this.#recordKey(sessionKey);
    const [value, ttlMs] = (await this.#script(READ_WITH_TTL, key, [], 'bytes')) as [
      Buffer | null,
      number,
    ];
    const read = value === null ? ABSENT : this.#decode(value, key);
    return { read: this.#durable?.overlay(sessionKey, read) ?? read, ttlMs };
  }

  /**
   * This process's own write or delete of `key`: dropped before (so no read in flight caches the
   * old value) and after (so nothing read meanwhile stays), before Redis's own message arrives.
   */
  async #changing<T>(key: string, change: () => Promise<T>): Promise<T> {
    this.#cache?.changed(key);
    try {
      return await change();
    } finally {
      this.#cache?.changed(key);
    }
  }

  /** Compare-and-set write; see TokenRecords.put. The TTL is capped by `maxRecordTtlSeconds`. */
  async #put(sessionKey: string, record: TokenRecord, options: PutOptions): Promise<boolean> {
    checkSessionKey(sessionKey);
    checkPut(record, options);
    const ttlMs = Math.min(ttlMilliseconds(options.ttlMs), this.#maxTtlMs);
    const key = this.#recordKey(sessionKey);
    const write = (): Promise<boolean> => this.#written(sessionKey, key, record, options, ttlMs);
    const replaced = options.expectedVersion;
    if (this.#durable === undefined || replaced === null) return write();
    // A refresh: the platform has retired the refresh token this write replaces.
    return this.#durable.refreshed(sessionKey, record, replaced, ttlMs, write);
  }

  /** The write of {@link #put}, one script where every key is on one server. */
  async #written(
    sessionKey: string,
    key: string,
    record: TokenRecord,
    options: PutOptions,
    ttlMs: number,
  ): Promise<boolean> {
    if (this.#redis.topology !== 'cluster')
      return this.#putAtOnce(sessionKey, key, record, options, ttlMs);
    // The player's index is written first: a member whose record never got written is pruned
    // later, while a record missing from the index would escape logoutPlayer().
    const loggedOutAt = await this.#index(playerKeyOf(record), sessionKey, ttlMs);
    const fresh = options.expectedVersion === null;
    // Logged out everywhere after this login's entry began (its generation, read before the code
    // exchange): logoutPlayer() wins.
    const since = fresh ? options.loginGeneration : undefined;
    if (since !== undefined && Number(loggedOutAt) > Number(since)) return false;
    const expected = options.expectedVersion === null ? '' : versionPrefix(options.expectedVersion);
    const written = await this.#changing(key, () =>
      this.#script(PUT_IF_VERSION, key, [expected, this.#encode(record, key), String(ttlMs)]),
    );
    if (written !== 1) return false;
    // A new login that a logoutPlayer() overtook (the player was logged out since the index was
    // written) takes itself back: the log-out may have scanned the index before this record existed.
    if (fresh) {
      const now = (await this.#run(
        'GET',
        this.#logoutKey(playerKeyOf(record)),
        [],
        'a login check',
      )) as string | null;
      const moved =
        since === undefined ? (now ?? '0') !== loggedOutAt : Number(now ?? '0') > Number(since);
      if (moved) {
        await this.#delete(sessionKey, {
          expectedVersion: record.version,
          openId: playerKeyOf(record),
        });
        return false;
      }
    }
    return true;
  }

  /**
   * {@link #put} where every key is on one server: the index, the log-out check and the write in one
   * script (PUT_LOGIN), so nothing runs between them and no check after the write is needed.
   */
  async #putAtOnce(
    sessionKey: string,
    key: string,
    record: TokenRecord,
    options: PutOptions,
    ttlMs: number,
  ): Promise<boolean> {
    const now = Date.now();
    const playerKey = this.#playerKey(playerKeyOf(record));
    const since = options.expectedVersion === null ? (options.loginGeneration ?? '') : '';
    const expected = options.expectedVersion === null ? '' : versionPrefix(options.expectedVersion);
    const written = await this.#changing(key, () =>
      this.#script(
        PUT_LOGIN,
        [playerKey, this.#logoutKey(playerKeyOf(record)), key],
        [
          String(now + ttlMs),
          sessionKey,
          String(now),
          since,
          expected,
          this.#encode(record, key),
          String(ttlMs),
        ],
      ),
    );
    return written === 1;
  }

  /** A new login's writes in one script (PUT_NEW_LOGIN); see LoginWrites. */
  async #putNewLogin(write: LoginWrite): Promise<boolean> {
    const { sessionKey, record, loginGeneration, giveBack, session } = write;
    checkSessionKey(sessionKey);
    checkPut(record, { expectedVersion: null, ttlMs: write.ttlMs, loginGeneration });
    const ttlMs = Math.min(ttlMilliseconds(write.ttlMs), this.#maxTtlMs);
    if (giveBack !== undefined) checkCount(giveBack.key, -1, giveBack.windowMs);
    const key = this.#recordKey(sessionKey);
    const now = Date.now();
    const written = await this.#changing(key, () =>
      this.#script(
        PUT_NEW_LOGIN,
        [
          this.#playerKey(playerKeyOf(record)),
          this.#logoutKey(playerKeyOf(record)),
          key,
          `${this.#prefix}n:${giveBack?.key ?? ''}`,
          session?.key ?? '',
          session?.replaces ?? '',
        ],
        [
          String(now + ttlMs),
          sessionKey,
          String(now),
          loginGeneration,
          this.#encode(record, key),
          String(ttlMs),
          giveBack === undefined ? '' : '-1',
          String(Math.ceil(giveBack?.windowMs ?? 1)),
          session?.value ?? '',
          String(session?.ttlSeconds ?? 0),
          session?.replaces === undefined ? '' : '1',
        ],
      ),
    );
    return written === 1;
  }

  /** Indexes the session under its player until `ttlMs` from now; resolves the player's log-out mark. */
  async #index(openId: string, sessionKey: string, ttlMs: number): Promise<string> {
    const now = Date.now();
    const playerKey = this.#playerKey(openId);
    const generation = await this.#script(
      INDEX_SESSION,
      [playerKey, this.#logoutKey(openId)],
      [String(now + ttlMs), sessionKey, String(now)],
    );
    return String(generation);
  }

  /** The store-wide log-out generation ('0' before any logoutPlayer()). */
  async #loginGeneration(): Promise<string> {
    const generation = await this.#run('GET', this.#logoutsKey(), [], 'a login check');
    return generation === null ? '0' : String(generation);
  }

  /**
   * Deletes the record, with `expectedVersion` only while it still has that version; with
   * `openId`, its entry in the player's index goes too.
   */
  async #delete(sessionKey: string, options?: DeleteOptions): Promise<boolean> {
    checkSessionKey(sessionKey);
    const expectedVersion = options?.expectedVersion;
    checkExpectedVersion(expectedVersion);
    const key = this.#recordKey(sessionKey);
    const deleted = await this.#changing(key, () =>
      expectedVersion === undefined
        ? this.#run('DEL', key, [], 'a delete')
        : this.#script(DELETE_IF_VERSION, key, [versionPrefix(expectedVersion)]),
    );
    const openId = options?.openId;
    if (deleted === 1 && typeof openId === 'string' && openId.length > 0) {
      await this.#run('ZREM', this.#playerKey(openId), [sessionKey], 'a delete');
    }
    // A logout is answered once a replica holds it, even when asked again.
    if (options?.logout === true) await this.#durable?.loggedOut([sessionKey], this.#maxTtlMs);
    else if (deleted === 1) await this.#durable?.deleted([sessionKey], this.#maxTtlMs);
    return deleted === 1;
  }

  /** Takes the session's lock for `ttlMs` (SET NX PX); resolves the owner, `undefined` when held. */
  async #acquire(sessionKey: string, ttlMs: number): Promise<string | undefined> {
    checkSessionKey(sessionKey);
    const lockTtlMs = ttlMilliseconds(ttlMs);
    // Just after the server was lost, the lock may be on a primary that died, and the refresh
    // token in the record the new one holds already retired: its owner writes the newer record
    // back first (docs/durability.md).
    const key = this.#lockKey(sessionKey);
    if (this.#durable?.settling === true) {
      // Held, by the failover; a Redis that still does not answer fails the call as always.
      await this.#run('PTTL', key, [], 'a lock');
      return undefined;
    }
    const owner = randomBytes(16).toString('base64url');
    const taken = await withDeadline(
      this.#redis.run('SET', key, [owner, 'PX', String(lockTtlMs), 'NX']),
      this.#timeoutMs,
      'a lock',
    );
    if (taken !== 'OK') return undefined;
    // The holder re-reads the record before refreshing: from Redis, not from a copy that another
    // process's message (sent before this lock was free) may not have removed yet.
    this.#cache?.changed(this.#recordKey(sessionKey));
    return owner;
  }

  /** Releases the session's lock only if `owner` still holds it. */
  async #release(sessionKey: string, owner: string): Promise<boolean> {
    checkSessionKey(sessionKey);
    if (typeof owner !== 'string' || owner.length === 0) return false;
    const released = await this.#script(RELEASE_IF_OWNER, this.#lockKey(sessionKey), [owner]);
    return released === 1;
  }

  /** Gives the lock `ttlMs` more only if `owner` still holds it (owner-checked PEXPIRE). */
  async #extend(sessionKey: string, owner: string, ttlMs: number): Promise<boolean> {
    checkSessionKey(sessionKey);
    if (typeof owner !== 'string' || owner.length === 0) return false;
    const extended = await this.#script(EXTEND_IF_OWNER, this.#lockKey(sessionKey), [
      owner,
      String(ttlMilliseconds(ttlMs)),
    ]);
    return extended === 1;
  }

  /** Records that no process may refresh version `version` of this session's record for `ttlMs`. */
  async #hold(sessionKey: string, version: number, ttlMs: number): Promise<void> {
    checkSessionKey(sessionKey);
    checkExpectedVersion(version);
    await withDeadline(
      this.#redis.run('SET', this.#holdKey(sessionKey), [
        String(version),
        'PX',
        String(ttlMilliseconds(ttlMs)),
      ]),
      this.#timeoutMs,
      'a refresh hold',
    );
  }

  /** Milliseconds left of a hold on `version`; 0 when none. */
  async #heldMs(sessionKey: string, version: number): Promise<number> {
    checkSessionKey(sessionKey);
    checkExpectedVersion(version);
    return Number(await this.#script(HELD_BACK_MS, this.#holdKey(sessionKey), [String(version)]));
  }

  /** Gives the record and its index entry `ttlMs` more to live from now, without rewriting it. */
  async #renew(sessionKey: string, openId: string, ttlMs: number): Promise<boolean> {
    checkSessionKey(sessionKey);
    checkOpenId(openId);
    const lifetimeMs = Math.min(ttlMilliseconds(ttlMs), this.#maxTtlMs);
    const extended = await withDeadline(
      this.#redis.run('PEXPIRE', this.#recordKey(sessionKey), [String(lifetimeMs)]),
      this.#timeoutMs,
      'a touch',
    );
    if (extended !== 1) return false;
    await this.#index(openId, sessionKey, lifetimeMs);
    return true;
  }

  /** Claims `key` once for `ttlMs` (SET NX PX). Pass a hash (e.g. `hashCode(code)`), not a secret. */
  async #claimOnce(key: string, ttlMs: number): Promise<boolean> {
    checkClaimKey(key);
    const claimTtlMs = ttlMilliseconds(ttlMs);
    const claimed = await withDeadline(
      this.#redis.run('SET', `${this.#prefix}c:${key}`, ['1', 'PX', String(claimTtlMs), 'NX']),
      this.#timeoutMs,
      'a claim',
    );
    return claimed === 'OK';
  }

  /** Adds `increment` to the counter `key` (one Lua call); its window of `windowMs` opens with its first count. */
  async #countInWindow(key: string, increment: -1 | 0 | 1, windowMs: number): Promise<WindowCount> {
    const windowLengthMs = checkCount(key, increment, windowMs);
    const [count, resetInMs] = (await this.#script(COUNT_IN_WINDOW, `${this.#prefix}n:${key}`, [
      String(increment),
      String(windowLengthMs),
    ])) as [number, number];
    return { count, resetInMs };
  }

  /** An entry's checks before its code exchange, in one script (BEGIN_ENTRY); see EntryChecks. */
  async #beginEntry(entry: EntryBegin): Promise<EntryBeginning> {
    checkEntryBegin(entry);
    const { failureKey, budgetKey } = entry;
    const reply = (await this.#script(
      BEGIN_ENTRY,
      [
        `${this.#prefix}n:${failureKey ?? ''}`,
        this.#holdKey(entry.holdKey),
        `${this.#prefix}c:${entry.claimKey}`,
        this.#logoutsKey(),
        `${this.#prefix}c:${entry.probeKey}`,
        `${this.#prefix}n:${budgetKey ?? ''}`,
        `${this.#prefix}n:${entry.failedKey ?? ''}`,
      ],
      [
        failureKey === undefined ? '' : String(entry.failureLimit),
        String(Math.ceil(entry.failureWindowMs)),
        String(entry.holdVersion),
        String(Math.ceil(entry.claimTtlMs)),
        String(Math.ceil(entry.probeTtlMs)),
        budgetKey === undefined ? '' : String(entry.budgetPerSecond),
      ],
    )) as unknown[];
    const [stop, retryInMs, probing, claimed, generation, reserved, budgeted] = reply.map(String);
    return {
      stopped:
        stop === '' ? undefined : { reason: stop as EntryStop, retryInMs: Number(retryInMs) },
      reserved: reserved === '1',
      probing: probing === '1',
      budgeted: budgeted === '1',
      claimed: claimed === '' ? undefined : claimed === '1',
      loginGeneration: generation === '' ? undefined : generation,
    };
  }

  /** The player's live logins, latest expiry first; prunes index members whose record is gone. */
  async #loginsOf(openId: string): Promise<PlayerLogin[]> {
    return (await this.#liveLogins(openId)).sort((a, b) => b.expiresAt - a.expiresAt);
  }

  /** Deletes every session record of the player (log out everywhere); resolves how many. */
  async #deletePlayer(openId: string): Promise<number> {
    checkOpenId(openId);
    const indexKey = this.#playerKey(openId);
    // First: a login of this player that read an older generation is refused at its put, and
    // one that indexed itself before this mark and writes its record after the scan below sees
    // the mark and takes itself back (see #put). Two keys (two Cluster slots): two calls.
    const generation = await withDeadline(
      this.#redis.run('INCR', this.#logoutsKey()),
      this.#timeoutMs,
      'a player logout',
    );
    await this.#script(RAISE_LOGOUT, this.#logoutKey(openId), [
      String(generation),
      String(this.#maxTtlMs),
    ]);
    const members = (await this.#liveLogins(openId)).map((login) => login.sessionKey);
    // One DEL per record: on a Cluster the records live in different slots.
    const deleted = await withDeadline(
      Promise.all(
        members.map((sessionKey) => {
          const key = this.#recordKey(sessionKey);
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
    // Asked again after a 503, with nothing left to delete: the earlier writes are waited for.
    await this.#durable?.loggedOut(members, this.#maxTtlMs, indexKey);
    return deleted.reduce((sum, count) => sum + count, 0);
  }

  async #liveLogins(openId: string): Promise<PlayerLogin[]> {
    checkOpenId(openId);
    const indexKey = this.#playerKey(openId);
    const lookup = async (): Promise<PlayerLogin[]> => {
      const redis = this.#redis;
      await redis.run('ZREMRANGEBYSCORE', indexKey, ['-inf', String(Date.now())]);
      // RESP2 (and ioredis 6's legacy mapping) answer member, score, member, …; RESP3 answers
      // [member, score] pairs.
      const reply = (await redis.run('ZRANGE', indexKey, ['0', '-1', 'WITHSCORES'])) as unknown[];
      const logins: PlayerLogin[] = [];
      for (let i = 0; i < reply.length;) {
        const item = reply[i];
        if (Array.isArray(item)) {
          logins.push({ sessionKey: String(item[0]), expiresAt: Number(item[1]) });
          i += 1;
        } else {
          logins.push({ sessionKey: String(item), expiresAt: Number(reply[i + 1]) });
          i += 2;
        }
      }
      const exists = await Promise.all(
        logins.map((login) => redis.run('EXISTS', this.#recordKey(login.sessionKey))),
      );
      const gone = logins.filter((_, index) => exists[index] === 0).map((l) => l.sessionKey);
      if (gone.length > 0) await redis.run('ZREM', indexKey, gone);
      return logins.filter((_, index) => exists[index] === 1);
    };
    return withDeadline(lookup(), this.#timeoutMs, 'a player lookup');
  }

  #playerKey(openId: string): string {
    return `${this.#prefix}p:{${hashOpenId(openId)}}`;
  }

  /** The store-wide log-out generation at which the player was last logged out everywhere. */
  #logoutKey(openId: string): string {
    return `${this.#playerKey(openId)}:o`;
  }

  /** The store-wide log-out generation: counts log-outs everywhere. */
  #logoutsKey(): string {
    return `${this.#prefix}logouts`;
  }

  #holdKey(sessionKey: string): string {
    return `${this.#prefix}{${sessionKey}}:r`;
  }

  #recordKey(sessionKey: string): string {
    return `${this.#prefix}{${sessionKey}}:t`;
  }

  /**
   * Where express-session's `store` keeps session `sid`, when it is on this store's client: a
   * RedisSessionStore says so; another store's place is the `sessions` option.
   */
  #sessionRedisKey(store: unknown, sid: string): string | undefined {
    if (typeof store !== 'object' || store === null) return undefined;
    const keys = (store as { [SESSION_REDIS_KEYS]?: SessionRedisKeys })[SESSION_REDIS_KEYS];
    if (keys !== undefined) return keys.client === this.#client ? keys.keyOf(sid) : undefined;
    return this.#sessionPrefix === undefined ? undefined : this.#sessionPrefix + sid;
  }

  /**
   * Whether the server answering now holds a write of `key`: a record at `version` or later (its
   * stored value starts `<version>|`), any value (`0`), or none (`null`).
   */
  async #holds(key: string, version: number | null): Promise<boolean> {
    if (version === null || version === 0) {
      const exists = Number(await this.#run('EXISTS', key, [], 'a durability check'));
      return version === null ? exists === 0 : exists === 1;
    }
    const head = await this.#run('GETRANGE', key, ['0', '19'], 'a durability check');
    const stored = Number(/^(\d+)\|/.exec(String(head ?? ''))?.[1] ?? 0);
    return stored >= version;
  }

  #lockKey(sessionKey: string): string {
    return `${this.#prefix}{${sessionKey}}:l`;
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

  /** Where the contract's values live: apart from the engine's keys. */
  #valueKey(key: string): string {
    return `${this.#prefix}v:${key}`;
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

  #decode(value: Buffer, key: string): RecordRead {
    const frame = splitStoredValue(value);
    if (frame === undefined) return unreadable('parse');
    let payload: Buffer;
    if (this.#keyRing === undefined) {
      if (frame.mark !== PLAIN_MARK) {
        const sealed = frame.mark === SEALED_MARK || frame.mark === SEALED_DERIVED_MARK;
        return unreadable(sealed ? 'unknown_key' : 'parse');
      }
      payload = frame.body;
    } else {
      // A record in the clear is refused too: anyone able to write to Redis could plant one.
      const derived = frame.mark === SEALED_DERIVED_MARK;
      if (!derived && frame.mark !== SEALED_MARK) return unreadable('decrypt');
      const aad = RedisTokenStore.#aad(key, frame.version);
      const opened = this.#keyRing.open(frame.body, aad, derived);
      if ('failure' in opened) return unreadable(opened.failure);
      payload = opened.plaintext;
    }
    const record = decodeRecordPayload(payload, frame.version);
    return record === undefined ? unreadable('parse') : { status: 'found', record };
  }
}
