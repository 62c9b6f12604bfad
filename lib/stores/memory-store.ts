// MemoryTokenStore: the token store of a single process (and of tests), with the same semantics as
// RedisTokenStore. Bounded in size; expiry is checked when an entry is read, so no timer runs.
import { randomBytes } from 'node:crypto';
import type { TokenRecord } from '../core/token-record';
import type { DeleteOptions, PutOptions, TokenStore, WindowCount } from '../core/token-store';
import { StoreUnavailableError } from '../errors';
import { ChangeWaiters } from './change-waiters';
import {
  checkClaimKey,
  checkCount,
  checkExpectedVersion,
  checkPut,
  checkSessionId,
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

/**
 * Token store kept in this process's memory: for a single process and for tests. Records, locks
 * and claims are lost on restart and not shared between processes; use RedisTokenStore for more
 * than one process.
 */
export class MemoryTokenStore implements TokenStore {
  readonly #records: ExpiringMap<TokenRecord>;
  readonly #locks: ExpiringMap<string>;
  readonly #claims: ExpiringMap<true>;
  readonly #counters: ExpiringMap<{ count: number; endsAt: number }>;
  readonly #holds: ExpiringMap<number>;
  /** Session ids by player, for sessionsOf/deletePlayer; pruned against #records when read. */
  readonly #players = new Map<string, Set<string>>();
  /** Wake-ups of waitForChange() by session id. */
  readonly #waiters = new ChangeWaiters();

  constructor(options: MemoryTokenStoreOptions = {}) {
    const { maxEntries } = parseMemoryTokenStoreOptions(options);
    // The per-player index follows the records out, so it is bounded by maxEntries too.
    this.#records = new ExpiringMap(maxEntries, (sessionId, record) => {
      this.#unindex(record.openId, sessionId);
      this.#changed(sessionId);
    });
    this.#locks = new ExpiringMap(maxEntries);
    this.#claims = new ExpiringMap(maxEntries);
    this.#counters = new ExpiringMap(maxEntries);
    this.#holds = new ExpiringMap(maxEntries);
  }

  /** Reads the record of a session (a copy); `undefined` when there is none or it expired. */
  async get(sessionId: string): Promise<TokenRecord | undefined> {
    checkSessionId(sessionId);
    const record = this.#records.get(sessionId);
    return record === undefined ? undefined : copyRecord(record);
  }

  /** Compare-and-set write of a copy of `record`; see TokenStore.put. */
  async put(sessionId: string, record: TokenRecord, options: PutOptions): Promise<boolean> {
    checkSessionId(sessionId);
    checkPut(record, options);
    const ttlMs = ttlMilliseconds(options.ttlMs);
    const current = this.#records.get(sessionId);
    const matches =
      options.expectedVersion === null
        ? current === undefined
        : current?.version === options.expectedVersion;
    if (!matches) return false;
    if (current !== undefined && current.openId !== record.openId)
      this.#unindex(current.openId, sessionId);
    this.#records.set(sessionId, copyRecord(record), ttlMs);
    this.#changed(sessionId);
    let sessions = this.#players.get(record.openId);
    if (sessions === undefined) this.#players.set(record.openId, (sessions = new Set()));
    sessions.add(sessionId);
    return true;
  }

  /** Players in the per-player index: never more than `maxEntries`, as records leave it goes too. */
  get indexedPlayerCount(): number {
    return this.#players.size;
  }

  /** How many live session records the player has. */
  async sessionsOf(openId: string): Promise<number> {
    return this.#liveSessions(openId).length;
  }

  /** Deletes every session record of the player; resolves how many. */
  async deletePlayer(openId: string): Promise<number> {
    const sessions = this.#liveSessions(openId);
    for (const sessionId of sessions) this.#records.delete(sessionId);
    this.#players.delete(openId);
    return sessions.length;
  }

  #unindex(openId: string, sessionId: string): void {
    const sessions = this.#players.get(openId);
    if (sessions === undefined) return;
    sessions.delete(sessionId);
    if (sessions.size === 0) this.#players.delete(openId);
  }

  #liveSessions(openId: string): string[] {
    const sessions = this.#players.get(openId);
    if (sessions === undefined) return [];
    for (const sessionId of sessions) {
      if (this.#records.get(sessionId)?.openId !== openId) sessions.delete(sessionId);
    }
    if (sessions.size === 0) this.#players.delete(openId);
    return [...sessions];
  }

  /** Deletes the record, with `expectedVersion` only while it still has that version. */
  async delete(sessionId: string, options?: DeleteOptions): Promise<boolean> {
    checkSessionId(sessionId);
    const expectedVersion = options?.expectedVersion;
    checkExpectedVersion(expectedVersion);
    const current = this.#records.get(sessionId);
    if (current === undefined) return false;
    if (expectedVersion !== undefined && current.version !== expectedVersion) return false;
    return this.#records.delete(sessionId);
  }

  /** Takes the session's lock for `ttlMs`; resolves the owner value, or `undefined` when held. */
  async acquireLock(sessionId: string, ttlMs: number): Promise<string | undefined> {
    checkSessionId(sessionId);
    const lockTtlMs = ttlMilliseconds(ttlMs);
    if (this.#locks.get(sessionId) !== undefined) return undefined;
    const owner = randomBytes(16).toString('base64url');
    this.#locks.set(sessionId, owner, lockTtlMs);
    return owner;
  }

  /** Releases the session's lock only if `owner` still holds it. */
  async releaseLock(sessionId: string, owner: string): Promise<boolean> {
    checkSessionId(sessionId);
    if (this.#locks.get(sessionId) !== owner) return false;
    this.#locks.delete(sessionId);
    this.#changed(sessionId);
    return true;
  }

  /** Resolves when the session's record is written or removed or its lock released, or after `timeoutMs`. */
  waitForChange(sessionId: string, timeoutMs: number): Promise<void> {
    checkSessionId(sessionId);
    return this.#waiters.waitFor([sessionId], timeoutMs);
  }

  #changed(sessionId: string): void {
    this.#waiters.wake(sessionId);
  }

  /** Gives the lock `ttlMs` more only if `owner` still holds it. */
  async extendLock(sessionId: string, owner: string, ttlMs: number): Promise<boolean> {
    checkSessionId(sessionId);
    const lockTtlMs = ttlMilliseconds(ttlMs);
    return this.#locks.get(sessionId) === owner && this.#locks.expire(sessionId, lockTtlMs);
  }

  /** Records that version `version` of this session's record is not refreshed for `ttlMs`. */
  async holdBackRefreshes(sessionId: string, version: number, ttlMs: number): Promise<void> {
    checkSessionId(sessionId);
    this.#holds.set(sessionId, version, ttlMilliseconds(ttlMs));
  }

  /** Milliseconds left of a hold on `version` set by holdBackRefreshes; 0 when none. */
  async refreshHeldBackMs(sessionId: string, version: number): Promise<number> {
    checkSessionId(sessionId);
    return this.#holds.get(sessionId) === version ? this.#holds.ttlOf(sessionId) : 0;
  }

  /** Gives the record `ttlMs` more to live from now. */
  async touch(sessionId: string, _openId: string, ttlMs: number): Promise<boolean> {
    checkSessionId(sessionId);
    return this.#records.expire(sessionId, ttlMilliseconds(ttlMs));
  }

  /**
   * Claims `key` once for `ttlMs`; `false` when it was claimed before and has not expired. Rejects
   * with `StoreUnavailableError` when `maxEntries` unexpired claims are held: an unexpired claim
   * is never dropped to make room, since that would let its code be sent a second time.
   */
  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
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

  /** Adds `increment` to the counter `key`; its window of `windowMs` opens with its first count. */
  async countInWindow(key: string, increment: 0 | 1, windowMs: number): Promise<WindowCount> {
    const windowLengthMs = checkCount(key, increment, windowMs);
    let counter = this.#counters.get(key);
    if (counter === undefined && increment === 1) {
      counter = { count: 0, endsAt: Date.now() + windowLengthMs };
      this.#counters.set(key, counter, windowLengthMs);
    }
    if (counter === undefined) return { count: 0, resetInMs: 0 };
    counter.count += increment;
    return { count: counter.count, resetInMs: Math.max(0, counter.endsAt - Date.now()) };
  }

  /** Drops every record, lock, claim and counter. */
  async close(): Promise<void> {
    this.#records.clear();
    this.#locks.clear();
    this.#claims.clear();
    this.#counters.clear();
    this.#holds.clear();
    this.#players.clear();
  }
}
