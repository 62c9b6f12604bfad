// RedisTokenStore: the store contract (core/token-store.ts) in Redis (standalone, Sentinel or
// Cluster) through node-redis or ioredis (the command seam in ./redis/), with a deadline on every
// call, its fast paths (StoreFastPaths: the record cache, an entry's checks and a new login's
// writes in one script each), durability through a failover and its own encryption keys.
import { EventEmitter } from 'node:events';
import { invalidOption } from '../errors';
import type {
  EntryBegin,
  EntryBeginning,
  EntryStop,
  LoginWrite,
  SessionRedisKeys,
  StoreFastPaths,
} from '../core/store-engine';
import { SESSION_REDIS_KEYS, STORE_FAST_PATHS } from '../core/store-engine';
import type { StorePutOptions, StoredValue, TokenStore } from '../core/token-store';
import {
  MAX_INDEXED_LOGINS,
  storeKeys,
  sessionKeyOfLock,
  sessionKeyOfRecord,
} from '../core/store-keys';
import { playerKeyOf } from '../core/player-key';
import { OWN_KEY_RING, RecordKeyRing } from './encryption';
import { parseOptions } from '../util/parse-options';
import { redisTokenStoreOptionsSchema, type RedisTokenStoreOptions } from './redis-store-options';
import {
  BEGIN_ENTRY,
  DELETE_IF_VERSION,
  IF_VALUE,
  PUT_IF_VERSION,
  PUT_NEW_LOGIN,
  READ_WITH_TTL,
} from './scripts';
import type { LuaScript } from '../redis/lua-script';
import { withDeadline } from '../redis/with-deadline';
import { TrackedCache, type ReadTicket } from '../caching/tracked-cache';
import type { Argument, RedisCommands } from '../redis/commands';
import { hashTag } from '../redis/cluster-slots';
import type { KeyTracker, UnavailableBy } from '../caching/key-tracking';
import { trackKeys } from '../caching/cluster-key-tracking';
import { redisCommands } from '../redis/redis-client';
import type { ReplicaWaitOutcome } from '../durability/replica-acks';
import type { ReassertOutcome } from '../durability/kept-writes';
import { REASSERT_RECORD } from '../durability/reassert-script';
import { StoreDurability } from '../durability/store-durability';
import { checkClaimKey, checkExpectedVersion, ttlMilliseconds } from '../core/engine-arguments';

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

/** `<version>|` as stored in front of a value. */
const versionPrefix = (version: number): string => `${version}|`;

/** A value as stored: its version, a bar, then the contract's value. */
const STORED = /^[1-9]\d{0,15}\|/;

/**
 * The stored `<version>|<value>` as the contract's value, living `ttlMs` more (PTTL); a value
 * stored otherwise (by hand, or by another program) reads as absent, and is written over.
 */
function storedValue(stored: string, ttlMs: number): StoredValue | undefined {
  if (!STORED.test(stored)) return undefined;
  const bar = stored.indexOf('|');
  return Object.freeze({
    value: stored.slice(bar + 1),
    version: Number(stored.slice(0, bar)),
    expiresAt: ttlMs >= 0 ? Date.now() + ttlMs : Infinity,
  });
}

/**
 * Token store in Redis, shared by every process of the service: the store contract on Redis, each
 * value at `<prefix><key>` as `<version>|<value>` (docs/stores.md). Every call fails with
 * `StoreUnavailableError` after `operationTimeoutMs`; the client settings that make the client
 * itself fail fast, on each client and topology, are in docs/operations.md ("Redis"). The store
 * never closes the client.
 *
 * With `encryptionKeys`, each record is sealed with AES-256-GCM under its own HKDF-derived key and
 * bound to its Redis key; under `NODE_ENV=production` a store without them is refused unless
 * `allowPlaintextTokens: true` (rotation: docs/operations.md, "Encryption at rest"). A record that
 * does not open reads as `unreadable`, never as absent: the request gets 401 and keeps its session.
 *
 * Records read are served from this process's memory afterwards, dropped the moment Redis reports
 * their key changed (`recordCache`, docs/caching.md); writes a login depends on wait for a replica
 * (`durability`, docs/durability.md).
 */
export class RedisTokenStore extends EventEmitter<RedisTokenStoreEvents> implements TokenStore {
  /** Change notices: Redis's invalidations, present with the record cache. */
  readonly watch: TokenStore['watch'];
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
  readonly #cache: TrackedCache<StoredValue> | undefined;
  readonly #tracking: KeyTracker | undefined;
  /** Durability through a failover (docs/durability.md); absent when off or unavailable. */
  readonly #durable: StoreDurability | undefined;
  /** The reads of a record in flight, for requests that arrive meanwhile to share. */
  readonly #readsInFlight = new Map<
    string,
    { ticket: ReadTicket; read: Promise<StoredValue | undefined> }
  >();
  readonly #fast: StoreFastPaths;

  constructor(options: RedisTokenStoreOptions) {
    super();
    const config = parseOptions(redisTokenStoreOptionsSchema, options, 'RedisTokenStore');
    if (config.sessions !== undefined && config.sessions.client !== config.redis) {
      throw invalidOption(
        'RedisTokenStore: `sessions.client` must be the client given as `redis` (the wait for a replica runs on its server); leave `sessions` out for sessions kept elsewhere.',
        'sessions.client',
      );
    }
    // Every refusal before anything is set up: a refused store leaves no listener on the client.
    if (
      config.encryptionKeys === undefined &&
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
    this.#keyRing = config.encryptionKeys && new RecordKeyRing(config.encryptionKeys);
    const redis = redisCommands(config.redis);
    this.#client = config.redis;
    this.#prefix = config.prefix;
    this.#sessionPrefix = config.sessions?.prefix;
    this.#timeoutMs = config.operationTimeoutMs;
    this.#maxTtlMs = config.maxRecordTtlSeconds * 1000;
    const link = config.durability === false ? undefined : redis.replicaLink();
    if (typeof link === 'string') {
      // Told once the app can listen (platformLogin() subscribes its logger at creation).
      queueMicrotask(() => this.emit('durabilityUnavailable', { reason: link }));
    } else if (link !== undefined && config.durability !== false) {
      this.#durable = new StoreDurability({
        redis,
        link,
        settings: config.durability,
        reassert: (sessionKey, record, replaced, ttlMs) =>
          this.#script(REASSERT_RECORD, this.#recordKey(sessionKey), [
            String(replaced),
            String(record.version),
            versionPrefix(record.version) + record.value,
            String(ttlMs),
          ]).then(Number),
        redelete: (sessionKey) => this.#run('DEL', this.#recordKey(sessionKey), [], 'a delete'),
        markKey: (key) => `${this.#prefix}{${hashTag(key)}}:w`,
        recordKey: (sessionKey) => this.#recordKey(sessionKey),
        playerKey: (player) => this.#key(storeKeys.player(player)),
        maxTtlMs: this.#maxTtlMs,
        holds: (key, version) => this.#holds(key, version),
        sessionRedisKey: (store, sid) => this.#sessionRedisKey(store, sid),
        onWait: (outcome, durationMs) => this.emit('replicaWait', { outcome, durationMs }),
        onReassert: (outcome) => this.emit('reassert', { outcome }),
      });
    }
    this.#redis = redis;
    if (config.recordCache) {
      const cache = new TrackedCache<StoredValue>(config.recordCacheSize);
      this.#tracking = trackKeys(this.#redis, this.#prefix, {
        ...cache.listener,
        unavailable: (reason, by) => this.emit('recordCacheUnavailable', { reason, by }),
      });
      this.#cache = cache;
      this.watch = (key, onChange) => {
        checkClaimKey(key, 'store key');
        return cache.watch([this.#key(key)], onChange);
      };
    }
    const oneServer = this.#redis.topology !== 'cluster';
    this.#fast = {
      cachedGet: this.#cache && ((key) => this.#cachedGet(key)),
      watchLive: this.#cache && (() => this.#cache!.active),
      // Their keys are on several nodes of a Cluster: derived there.
      beginEntry: oneServer ? (entry) => this.#beginEntry(entry) : undefined,
      putNewLogin: oneServer ? (write, value) => this.#putNewLogin(write, value) : undefined,
      deleteIfValue: async (key, value) =>
        (await this.#script(IF_VALUE, this.#key(key), [value, ''])) === 1,
      renewIfValue: async (key, value, ttlMs) =>
        (await this.#script(IF_VALUE, this.#key(key), [value, String(ttlMs)])) === 1,
      sharesClient: (other) => other === config.redis,
      durability: this.#durable?.engine,
    };
  }

  /** What the package's engine (core/derived-engine.ts) uses beside the contract. */
  get [STORE_FAST_PATHS](): StoreFastPaths {
    return this.#fast;
  }

  /** The value at `key`: from memory for a record the cache holds, else from Redis. */
  async get(key: string): Promise<StoredValue | undefined> {
    checkClaimKey(key, 'store key');
    const sessionKey = sessionKeyOfRecord(key);
    if (sessionKey === undefined) return this.#read(key);
    if (this.#cache?.active !== true) return this.#overlay(sessionKey, await this.#read(key));
    return this.#cache.entryOf(key)?.value ?? this.#readThrough(key, sessionKey);
  }

  /** The contract's compare-and-set write (PUT_IF_VERSION): the new version, or `undefined`. */
  async put(key: string, value: string, options: StorePutOptions): Promise<number | undefined> {
    checkClaimKey(key, 'store key');
    if (typeof value !== 'string') throw new TypeError('The value must be a string.');
    const { expectedVersion } = options;
    if (expectedVersion !== null) checkExpectedVersion(expectedVersion);
    let ttlMs = ttlMilliseconds(options.ttlMs);
    const version = (expectedVersion ?? 0) + 1;
    const write = async (): Promise<boolean> =>
      (await this.#changing(key, () =>
        this.#script(PUT_IF_VERSION, this.#key(key), [
          expectedVersion === null ? '' : versionPrefix(expectedVersion),
          versionPrefix(version) + value,
          String(ttlMs),
        ]),
      )) === 1;
    const sessionKey = sessionKeyOfRecord(key);
    if (sessionKey !== undefined) {
      ttlMs = Math.min(ttlMs, this.#maxTtlMs);
      // A refresh: the platform has retired the refresh token this write replaces.
      if (this.#durable !== undefined && expectedVersion !== null) {
        const record = { value, version, expiresAt: Date.now() + ttlMs };
        const written = await this.#durable.refreshed(
          sessionKey,
          Object.freeze(record),
          expectedVersion,
          ttlMs,
          write,
        );
        return written ? version : undefined;
      }
    } else if (sessionKeyOfLock(key) !== undefined && expectedVersion === null) {
      // Settling after a failover: held, while a rotated token's owner writes its record back
      // (docs/durability.md); a Redis that still does not answer fails the call as always.
      if (this.#durable?.settling === true) {
        await this.#run('PTTL', this.#key(key), [], 'a lock');
        return undefined;
      }
      if (!(await write())) return undefined;
      // The holder re-reads the record before refreshing: from Redis, not from a copy that another
      // process's message (sent before this lock was free) may not have removed yet.
      this.#cache?.changed(this.#recordKey(sessionKeyOfLock(key)!));
      return version;
    }
    return (await write()) ? version : undefined;
  }

  async delete(key: string, expectedVersion?: number): Promise<boolean> {
    checkClaimKey(key, 'store key');
    checkExpectedVersion(expectedVersion);
    const redisKey = this.#key(key);
    const deleted = await this.#changing(key, () =>
      expectedVersion === undefined
        ? this.#run('DEL', redisKey, [], 'a delete')
        : this.#script(DELETE_IF_VERSION, redisKey, [versionPrefix(expectedVersion)]),
    );
    return deleted === 1;
  }

  /** The contract's renewal: PEXPIRE (a record's capped by `maxRecordTtlSeconds`). */
  async renew(key: string, ttlMs: number): Promise<boolean> {
    checkClaimKey(key, 'store key');
    let lifetimeMs = ttlMilliseconds(ttlMs);
    if (sessionKeyOfRecord(key) !== undefined) lifetimeMs = Math.min(lifetimeMs, this.#maxTtlMs);
    const renewed = await this.#run('PEXPIRE', this.#key(key), [String(lifetimeMs)], 'a renewal');
    return renewed === 1;
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

  /** Its ring: what seals its records, and what platformLogin() refuses other keys than. */
  get [OWN_KEY_RING](): RecordKeyRing | undefined {
    return this.#keyRing;
  }

  /** The value at `key` in Redis and the milliseconds it has left, in one command. */
  async #read(key: string): Promise<StoredValue | undefined> {
    const [stored, ttlMs] = (await this.#script(READ_WITH_TTL, this.#key(key), [])) as [
      string | null,
      number,
    ];
    return stored === null ? undefined : storedValue(stored, ttlMs);
  }

  #overlay(sessionKey: string, stored: StoredValue | undefined): StoredValue | undefined {
    return this.#durable === undefined ? stored : this.#durable.overlay(sessionKey, stored);
  }

  /** A record the cache holds, while its tracking is live; else `undefined`. */
  #cachedGet(key: string): StoredValue | undefined {
    const cache = this.#cache!;
    return cache.active === true ? cache.entryOf(key)?.value : undefined;
  }

  /** A miss: one read in flight, shared and kept as docs/caching.md says; an absence is never kept. */
  #readThrough(key: string, sessionKey: string): Promise<StoredValue | undefined> {
    const cache = this.#cache!;
    const shared = this.#readsInFlight.get(key);
    if (shared !== undefined && cache.unchangedSince(shared.ticket)) return shared.read;
    const ticket = cache.beginRead(this.#key(key));
    const read = this.#read(key).then(
      (stored) => {
        const served = this.#overlay(sessionKey, stored);
        if (served === undefined || served !== stored) cache.abandonRead(ticket);
        else cache.endRead(ticket, key, stored, stored.expiresAt);
        return served;
      },
      (error: unknown) => {
        cache.abandonRead(ticket);
        throw error;
      },
    );
    this.#readsInFlight.set(key, { ticket, read });
    const done = (): void => {
      if (this.#readsInFlight.get(key)?.read === read) this.#readsInFlight.delete(key);
    };
    read.then(done, done);
    return read;
  }

  /** This process's own write or delete of a record: its copy dropped before and after (docs/caching.md). */
  async #changing<T>(key: string, change: () => Promise<T>): Promise<T> {
    const cache = sessionKeyOfRecord(key) === undefined ? undefined : this.#cache;
    const redisKey = this.#key(key);
    cache?.changed(redisKey);
    try {
      return await change();
    } finally {
      cache?.changed(redisKey);
    }
  }

  /** An entry's checks before its code exchange, in one script (BEGIN_ENTRY); see EntryChecks. */
  async #beginEntry(entry: EntryBegin): Promise<EntryBeginning> {
    const { failureKey, budgetKey } = entry;
    const counter = (key: string | undefined): string => this.#key(storeKeys.counter(key ?? ''));
    const reply = (await this.#script(
      BEGIN_ENTRY,
      [
        counter(failureKey),
        this.#key(storeKeys.hold(entry.holdKey)),
        this.#key(storeKeys.claim(entry.claimKey)),
        this.#key(storeKeys.generation),
        this.#key(storeKeys.claim(entry.probeKey)),
        counter(budgetKey),
        counter(entry.failedKey),
      ],
      [
        failureKey === undefined ? '' : String(entry.failureLimit),
        String(ttlMilliseconds(entry.failureWindowMs)),
        String(entry.holdVersion),
        String(ttlMilliseconds(entry.claimTtlMs)),
        String(ttlMilliseconds(entry.probeTtlMs)),
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

  /** A new login's writes in one script (PUT_NEW_LOGIN); see LoginWrites. */
  async #putNewLogin(write: LoginWrite, value: string): Promise<string[] | undefined> {
    const { sessionKey, record, loginGeneration, giveBack, session } = write;
    const ttlMs = ttlMilliseconds(write.ttlMs);
    const key = storeKeys.record(sessionKey);
    const player = playerKeyOf(record);
    const now = Date.now();
    const written = await this.#changing(key, () =>
      this.#script(
        PUT_NEW_LOGIN,
        [
          this.#key(storeKeys.player(player)),
          this.#key(storeKeys.loggedOut(player)),
          this.#key(key),
          this.#key(storeKeys.counter(giveBack?.key ?? '')),
          session?.key ?? '',
          session?.replaces ?? '',
        ],
        [
          String(now + ttlMs),
          sessionKey,
          String(now),
          loginGeneration,
          value,
          String(Math.min(ttlMs, this.#maxTtlMs)),
          giveBack === undefined ? '' : '-1',
          String(ttlMilliseconds(giveBack?.windowMs ?? 1)),
          session?.value ?? '',
          String(session?.ttlSeconds ?? 0),
          session?.replaces === undefined ? '' : '1',
          String(MAX_INDEXED_LOGINS),
        ],
      ),
    );
    return Array.isArray(written) ? written.slice(1).map(String) : undefined;
  }

  /** The Redis key of a store key. */
  #key(key: string): string {
    return this.#prefix + key;
  }

  #recordKey(sessionKey: string): string {
    return this.#key(storeKeys.record(sessionKey));
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
   * Whether the server answering now holds a write of `key`: a value at `version` or later (its
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

  /** One command on one key, within the deadline; `what` names it in the error. */
  #run(command: string, key: string, args: readonly Argument[], what: string): Promise<unknown> {
    return withDeadline(this.#sent(this.#redis.run(command, key, args)), this.#timeoutMs, what);
  }

  /** A script by EVALSHA (EVAL where the server or Cluster node lacks it), within the deadline. */
  #script(script: LuaScript, key: string | string[], args: Argument[]): Promise<unknown> {
    const keys = typeof key === 'string' ? [key] : key;
    const run = this.#sent(this.#redis.script(script, keys, args));
    return withDeadline(run, this.#timeoutMs, `the ${script.name} script`);
  }

  /** A command sent: its failure may be a sign that the server changed (docs/durability.md). */
  #sent(command: Promise<unknown>): Promise<unknown> {
    return this.#durable === undefined ? command : command.catch(this.#durable.noticed);
  }
}
