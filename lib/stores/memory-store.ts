// MemoryTokenStore: the token store of a single process (and of tests), with the same semantics as
// RedisTokenStore. Bounded in size; expiry is checked when an entry is read, so no timer runs.
import { randomBytes } from 'node:crypto';
import type { TokenRecord } from '../core/token-record';
import type {
  DeleteOptions,
  OneTimeCounters,
  PlayerLogin,
  PutOptions,
  RecordChanges,
  RecordRead,
  RefreshLocks,
  TokenRecords,
  TokenStore,
  WindowCount,
} from '../core/token-store';
import { StoreUnavailableError } from '../errors';
import { ChangeWatchers } from './change-waiters';
import {
  checkClaimKey,
  checkCount,
  checkExpectedVersion,
  checkOpenId,
  checkPut,
  checkSessionKey,
  ttlMilliseconds,
} from './argument-checks';
import { parseMemoryTokenStoreOptions, type MemoryTokenStoreOptions } from './memory-store-options';

interface Entry<T> {
  value: T;
  expiresAt: number;
}

/** A Map whose entries expire (checked on access) and whose oldest entry goes when it is full. */
class ExpiringMap<T> {
  readonly #entries = new Map<string, Entry<T>>();
  readonly #maxEntries: number;
  /** Told of every entry that leaves the map (deleted, expired or evicted), not of a replaced one. */
  readonly #onRemove: ((key: string, value: T) => void) | undefined;

  constructor(maxEntries: number, onRemove?: (key: string, value: T) => void) {
    this.#maxEntries = maxEntries;
    this.#onRemove = onRemove;
  }

  get(key: string): T | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      this.#onRemove?.(key, entry.value);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: T, ttlMs: number): void {
    // Re-inserting moves the key to the end, so Map order stays oldest-written first.
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: Date.now() + ttlMs });
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.entries().next();
      if (oldest.done !== true) {
        this.#entries.delete(oldest.value[0]);
        this.#onRemove?.(oldest.value[0], oldest.value[1].value);
      }
    }
  }

  /** Sets `key` only when the map has room (after dropping expired entries); `false` when full. */
  setIfRoom(key: string, value: T, ttlMs: number): boolean {
    if (this.#entries.size >= this.#maxEntries && !this.#entries.has(key)) {
      // Oldest written first: entries of one lifetime expire in this order, so the scan stops early.
      const now = Date.now();
      for (const [oldKey, entry] of this.#entries) {
        if (entry.expiresAt > now) break;
        this.#entries.delete(oldKey);
        this.#onRemove?.(oldKey, entry.value);
      }
      if (this.#entries.size >= this.#maxEntries) return false;
    }
    this.set(key, value, ttlMs);
    return true;
  }

  /** Gives an unexpired entry `ttlMs` more from now; `false` when there is none. */
  expire(key: string, ttlMs: number): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.expiresAt <= Date.now()) return false;
    entry.expiresAt = Date.now() + ttlMs;
    return true;
  }

  /** When an unexpired entry expires, epoch milliseconds; `undefined` when there is none. */
  expiresAtOf(key: string): number | undefined {
    const entry = this.#entries.get(key);
    return entry === undefined || entry.expiresAt <= Date.now() ? undefined : entry.expiresAt;
  }

  /** Milliseconds left of an entry; 0 when there is none. */
  ttlOf(key: string): number {
    const entry = this.#entries.get(key);
    return entry === undefined ? 0 : Math.max(0, entry.expiresAt - Date.now());
  }

  delete(key: string): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#entries.delete(key);
    this.#onRemove?.(key, entry.value);
    return true;
  }

  clear(): void {
    this.#entries.clear();
  }
}

/** A copy holding only the fields of a TokenRecord, so neither side can change the other's. */
function copyRecord(record: TokenRecord): TokenRecord {
  const copy: TokenRecord = {
    accessToken: record.accessToken,
    refreshToken: record.refreshToken,
    accessExpiresAt: record.accessExpiresAt,
    refreshExpiresAt: record.refreshExpiresAt,
    openId: record.openId,
    scope: [...record.scope],
    version: record.version,
    obtainedAt: record.obtainedAt,
  };
  if (record.unionId !== undefined) copy.unionId = record.unionId;
  return copy;
}

/** How long a player's log-out is remembered for logins under way: far longer than any code exchange. */
const LOGGED_OUT_MEMORY_MS = 3_600_000;

/**
 * Token store kept in this process's memory: for a single process and for tests. Records, locks
 * and claims are lost on restart and not shared between processes; use RedisTokenStore for more
 * than one process. Implements every part of the contract, `changes` included.
 */
export class MemoryTokenStore implements TokenStore {
  readonly records: TokenRecords;
  readonly locks: RefreshLocks;
  readonly counters: OneTimeCounters;
  readonly changes: RecordChanges;

  readonly #records: ExpiringMap<TokenRecord>;
  readonly #locks: ExpiringMap<string>;
  readonly #claims: ExpiringMap<true>;
  readonly #counters: ExpiringMap<{ count: number; endsAt: number }>;
  readonly #holds: ExpiringMap<number>;
  /** Log-outs everywhere so far: the login generation. */
  #logouts = 0;
  /**
   * The generation at which each player was last logged out everywhere, kept far longer than a
   * code exchange takes (an entry that began before that log-out is refused at its put).
   */
  readonly #loggedOutAt: ExpiringMap<number>;
  /** Session keys by player, for loginsOf/deletePlayer; pruned against #records when read. */
  readonly #players = new Map<string, Set<string>>();
  /** Watchers of `changes.watch` by session key. */
  readonly #watchers = new ChangeWatchers();

  constructor(options: MemoryTokenStoreOptions = {}) {
    const { maxEntries } = parseMemoryTokenStoreOptions(options);
    // The per-player index follows the records out, so it is bounded by maxEntries too.
    this.#records = new ExpiringMap(maxEntries, (sessionKey, record) => {
      this.#unindex(record.openId, sessionKey);
      this.#watchers.wake(sessionKey);
    });
    this.#locks = new ExpiringMap(maxEntries);
    this.#claims = new ExpiringMap(maxEntries);
    this.#counters = new ExpiringMap(maxEntries);
    this.#holds = new ExpiringMap(maxEntries);
    this.#loggedOutAt = new ExpiringMap(maxEntries);
    this.records = {
      get: async (sessionKey) => this.#get(sessionKey),
      put: async (sessionKey, record, putOptions) => this.#put(sessionKey, record, putOptions),
      delete: async (sessionKey, deleteOptions) => this.#delete(sessionKey, deleteOptions),
      renew: async (sessionKey, openId, ttlMs) => this.#renew(sessionKey, openId, ttlMs),
      loginsOf: async (openId) => this.#loginsOf(openId),
      deletePlayer: async (openId) => this.#deletePlayer(openId),
      loginGeneration: async () => String(this.#logouts),
    };
    this.locks = {
      acquire: async (sessionKey, ttlMs) => this.#acquire(sessionKey, ttlMs),
      extend: async (sessionKey, owner, ttlMs) => this.#extend(sessionKey, owner, ttlMs),
      release: async (sessionKey, owner) => this.#release(sessionKey, owner),
      hold: async (sessionKey, version, ttlMs) => this.#hold(sessionKey, version, ttlMs),
      heldMs: async (sessionKey, version) => this.#heldMs(sessionKey, version),
    };
    this.counters = {
      claimOnce: async (key, ttlMs) => this.#claimOnce(key, ttlMs),
      countInWindow: async (key, increment, windowMs) =>
        this.#countInWindow(key, increment, windowMs),
    };
    const watchers = this.#watchers;
    this.changes = {
      watch(sessionKey, onChange) {
        checkSessionKey(sessionKey);
        return watchers.watch([sessionKey], onChange);
      },
      // Every change happens in this process, under its own eyes.
      live: true,
    };
  }

  /** Players in the per-player index: never more than `maxEntries`, as records leave it goes too. */
  get indexedPlayerCount(): number {
    return this.#players.size;
  }

  #get(sessionKey: string): RecordRead {
    checkSessionKey(sessionKey);
    const record = this.#records.get(sessionKey);
    return record === undefined
      ? { status: 'absent' }
      : { status: 'found', record: copyRecord(record) };
  }

  #put(sessionKey: string, record: TokenRecord, options: PutOptions): boolean {
    checkSessionKey(sessionKey);
    checkPut(record, options);
    const ttlMs = ttlMilliseconds(options.ttlMs);
    const since = options.expectedVersion === null ? options.loginGeneration : undefined;
    // Logged out everywhere after this login's entry began: the log-out wins.
    if (since !== undefined && (this.#loggedOutAt.get(record.openId) ?? 0) > Number(since)) {
      return false;
    }
    const current = this.#records.get(sessionKey);
    const matches =
      options.expectedVersion === null
        ? current === undefined
        : current?.version === options.expectedVersion;
    if (!matches) return false;
    if (current !== undefined && current.openId !== record.openId)
      this.#unindex(current.openId, sessionKey);
    this.#records.set(sessionKey, copyRecord(record), ttlMs);
    this.#watchers.wake(sessionKey);
    let sessions = this.#players.get(record.openId);
    if (sessions === undefined) this.#players.set(record.openId, (sessions = new Set()));
    sessions.add(sessionKey);
    return true;
  }

  #delete(sessionKey: string, options?: DeleteOptions): boolean {
    checkSessionKey(sessionKey);
    const expectedVersion = options?.expectedVersion;
    checkExpectedVersion(expectedVersion);
    const current = this.#records.get(sessionKey);
    if (current === undefined) return false;
    if (expectedVersion !== undefined && current.version !== expectedVersion) return false;
    return this.#records.delete(sessionKey);
  }

  #renew(sessionKey: string, openId: string, ttlMs: number): boolean {
    checkSessionKey(sessionKey);
    checkOpenId(openId);
    // The index is read from #records (expiry included), so the record's new lifetime is enough.
    return this.#records.expire(sessionKey, ttlMilliseconds(ttlMs));
  }

  #loginsOf(openId: string): PlayerLogin[] {
    checkOpenId(openId);
    const logins: PlayerLogin[] = [];
    for (const sessionKey of this.#liveSessions(openId)) {
      const expiresAt = this.#records.expiresAtOf(sessionKey);
      if (expiresAt !== undefined) logins.push({ sessionKey, expiresAt });
    }
    return logins.sort((a, b) => b.expiresAt - a.expiresAt);
  }

  #deletePlayer(openId: string): number {
    checkOpenId(openId);
    // First the generation: a login of this player that read an older one is refused at its put.
    this.#logouts += 1;
    this.#loggedOutAt.set(openId, this.#logouts, LOGGED_OUT_MEMORY_MS);
    const sessions = this.#liveSessions(openId);
    for (const sessionKey of sessions) this.#records.delete(sessionKey);
    this.#players.delete(openId);
    return sessions.length;
  }

  #unindex(openId: string, sessionKey: string): void {
    const sessions = this.#players.get(openId);
    if (sessions === undefined) return;
    sessions.delete(sessionKey);
    if (sessions.size === 0) this.#players.delete(openId);
  }

  #liveSessions(openId: string): string[] {
    const sessions = this.#players.get(openId);
    if (sessions === undefined) return [];
    for (const sessionKey of sessions) {
      if (this.#records.get(sessionKey)?.openId !== openId) sessions.delete(sessionKey);
    }
    if (sessions.size === 0) this.#players.delete(openId);
    return [...sessions];
  }

  #acquire(sessionKey: string, ttlMs: number): string | undefined {
    checkSessionKey(sessionKey);
    const lockTtlMs = ttlMilliseconds(ttlMs);
    if (this.#locks.get(sessionKey) !== undefined) return undefined;
    const owner = randomBytes(16).toString('base64url');
    this.#locks.set(sessionKey, owner, lockTtlMs);
    return owner;
  }

  #release(sessionKey: string, owner: string): boolean {
    checkSessionKey(sessionKey);
    if (this.#locks.get(sessionKey) !== owner) return false;
    this.#locks.delete(sessionKey);
    this.#watchers.wake(sessionKey);
    return true;
  }

  #extend(sessionKey: string, owner: string, ttlMs: number): boolean {
    checkSessionKey(sessionKey);
    const lockTtlMs = ttlMilliseconds(ttlMs);
    return this.#locks.get(sessionKey) === owner && this.#locks.expire(sessionKey, lockTtlMs);
  }

  #hold(sessionKey: string, version: number, ttlMs: number): void {
    checkSessionKey(sessionKey);
    checkExpectedVersion(version);
    this.#holds.set(sessionKey, version, ttlMilliseconds(ttlMs));
  }

  #heldMs(sessionKey: string, version: number): number {
    checkSessionKey(sessionKey);
    checkExpectedVersion(version);
    return this.#holds.get(sessionKey) === version ? this.#holds.ttlOf(sessionKey) : 0;
  }

  /**
   * Claims `key` once for `ttlMs`; `false` when it was claimed before and has not expired. Rejects
   * with `StoreUnavailableError` when `maxEntries` unexpired claims are held: an unexpired claim
   * is never dropped to make room, since that would let its code be sent a second time.
   */
  #claimOnce(key: string, ttlMs: number): boolean {
    checkClaimKey(key);
    const claimTtlMs = ttlMilliseconds(ttlMs);
    if (this.#claims.get(key) !== undefined) return false;
    if (!this.#claims.setIfRoom(key, true, claimTtlMs)) {
      throw new StoreUnavailableError(
        'MemoryTokenStore holds `maxEntries` unexpired one-time claims and refuses new ones until some expire (a flood of made-up entry codes?).',
      );
    }
    return true;
  }

  #countInWindow(key: string, increment: -1 | 0 | 1, windowMs: number): WindowCount {
    const windowLengthMs = checkCount(key, increment, windowMs);
    let counter = this.#counters.get(key);
    if (counter === undefined && increment === 1) {
      counter = { count: 0, endsAt: Date.now() + windowLengthMs };
      this.#counters.set(key, counter, windowLengthMs);
    }
    if (counter === undefined) return { count: 0, resetInMs: 0 };
    counter.count = Math.max(0, counter.count + increment);
    if (counter.count === 0) {
      // Every count given back: no window is left, as in Redis.
      this.#counters.delete(key);
      return { count: 0, resetInMs: 0 };
    }
    return { count: counter.count, resetInMs: Math.max(0, counter.endsAt - Date.now()) };
  }

  /** Drops every record, lock, claim and counter. */
  async close(): Promise<void> {
    this.#records.clear();
    this.#locks.clear();
    this.#claims.clear();
    this.#counters.clear();
    this.#holds.clear();
    this.#loggedOutAt.clear();
    this.#players.clear();
  }
}
