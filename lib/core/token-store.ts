// The storage contract the callback and the refresh middleware rely on. Two implementations ship:
// MemoryTokenStore (one process) and RedisTokenStore (many processes, ioredis).
import type { TokenRecord } from './token-record';

/** Options of a compare-and-set write. */
export interface PutOptions {
  /**
   * The version the stored record must have for the write to happen, or `null` when no record
   * may exist yet (a fresh login).
   */
  expectedVersion: number | null;
  /** Time to live of the record in milliseconds (the store may cap it). */
  ttlMs: number;
}

/** A fixed-window counter as {@link TokenStore.countInWindow} resolves it. */
export interface WindowCount {
  /** Counts in the current window (0 when none). */
  count: number;
  /** Milliseconds until the window ends (0 when no window is open). */
  resetInMs: number;
}

/** Options of a delete. */
export interface DeleteOptions {
  /** Delete only while the stored record still has this version. */
  expectedVersion?: number;
  /** The player the record belongs to: its per-player index entry goes at once too. */
  openId?: string;
}

/** Events a store may emit (stores that are EventEmitters). */
export interface TokenStoreEvents {
  /** A record could not be decrypted or parsed; it was treated as absent. */
  unreadable: [{ sessionHash: string; reason: 'decrypt' | 'parse' | 'unknown_key' }];
  /** The server refused client tracking (RedisTokenStore): records are read from Redis each time. */
  recordCacheUnavailable: [{ reason: string }];
}

/**
 * Where token records live.
 *
 * Required: `get`, `put`, `delete`, `acquireLock`, `releaseLock`, `claimOnce`.
 * Recommended: `extendLock` (short refresh locks that free within seconds when their holder dies),
 * `holdBackRefreshes` and `refreshHeldBackMs` (the platform's Retry-After shared by all
 * processes), `touch` (an active session keeps its tokens).
 * Optional: `getCached` (a record held in process memory, answered without a promise),
 * `sessionsOf` and `deletePlayer` (a per-player index, for log-out-everywhere),
 * `countInWindow` (failed entries counted across processes, for `entryFailureLimit`),
 * `waitForChange` (wakes refresh waiters early),
 * `close()` (called on shutdown), and being an EventEmitter of {@link TokenStoreEvents}.
 *
 * Every method rejects with `StoreUnavailableError` when the backend fails or does not answer in
 * time; it never hangs.
 */
export interface TokenStore {
  /**
   * Reads the record of a session; `undefined` when there is none (or it cannot be read). The
   * record may be shared and frozen (RedisTokenStore serves one copy to every request): treat it
   * as read-only.
   */
  get(sessionId: string): Promise<TokenRecord | undefined>;
  /**
   * Optional (stores with a client-side cache): the session's record when this process holds it
   * in memory and knows it is current, else `undefined` — the caller then calls `get`. Synchronous,
   * so a hit costs the request no promise, no timer and no metric recording. The record is shared:
   * callers never modify it. `now` (epoch milliseconds) is the caller's current time when it has
   * read it already; a store that needs the time and is not given it reads the clock itself.
   */
  getCached?(sessionId: string, now?: number): TokenRecord | undefined;
  /**
   * Writes `record` only if the stored version equals `options.expectedVersion` (`null`: no record
   * stored). Resolves `true` when written, `false` when another writer got there first.
   */
  put(sessionId: string, record: TokenRecord, options: PutOptions): Promise<boolean>;
  /**
   * Deletes the record of a session; with `expectedVersion`, only while it still has that version.
   * Resolves `true` when a record was deleted.
   */
  delete(sessionId: string, options?: DeleteOptions): Promise<boolean>;
  /**
   * Takes the refresh lock of a session for `ttlMs`. Resolves a random owner value when taken,
   * `undefined` when another owner holds it.
   */
  acquireLock(sessionId: string, ttlMs: number): Promise<string | undefined>;
  /** Releases the lock only if `owner` still holds it. Resolves `true` when released. */
  releaseLock(sessionId: string, owner: string): Promise<boolean>;
  /**
   * Recommended: gives the lock `ttlMs` more from now, only if `owner` still holds it. Resolves
   * `true` when extended. Without it, locks are taken for the slowest possible refresh.
   */
  extendLock?(sessionId: string, owner: string, ttlMs: number): Promise<boolean>;
  /**
   * Recommended: records that no process may call the platform to refresh version `version` of
   * this session's record for `ttlMs` (the platform's Retry-After, or a cooldown after a failure).
   */
  holdBackRefreshes?(sessionId: string, version: number, ttlMs: number): Promise<void>;
  /** Recommended: milliseconds left of a hold on `version` set by `holdBackRefreshes`; 0 when none. */
  refreshHeldBackMs?(sessionId: string, version: number): Promise<number>;
  /**
   * Recommended: gives the session's record (and its per-player index entry) `ttlMs` more to live
   * from now, without rewriting it. Resolves `true` when the record exists.
   */
  touch?(sessionId: string, openId: string, ttlMs: number): Promise<boolean>;
  /**
   * Claims a one-time key (for example a hash of an authorization code) for `ttlMs`. Resolves
   * `true` for the first claim, `false` when the key was claimed before.
   */
  claimOnce(key: string, ttlMs: number): Promise<boolean>;
  /**
   * Optional (needed by `login.sessionsOf()`): how many live session records the player has.
   * Stores that offer it keep a per-player index on every `put`, pruned as records go.
   */
  sessionsOf?(openId: string): Promise<number>;
  /**
   * Optional (needed by `login.logoutPlayer()`): deletes every session record of the player, on
   * every process at once. Resolves how many were deleted. A login whose `put` runs concurrently
   * either is deleted too or its `put` resolves `false`: none survives the call.
   */
  deletePlayer?(openId: string): Promise<number>;
  /**
   * Optional (shares the counts of `entryFailureLimit` between processes; without it each process
   * counts on its own): adds `increment` (1, or 0 to only read) to the counter `key`. A window of
   * `windowMs` opens with the counter's first count; when it ends the counter is gone. Resolves
   * the count and the time left in the window.
   */
  countInWindow?(key: string, increment: 0 | 1, windowMs: number): Promise<WindowCount>;
  /**
   * Optional: resolves once the session's record or its refresh lock may have changed (written,
   * deleted, released or expired by any process), at the latest after `timeoutMs`. Requests
   * waiting for another process's refresh use it instead of polling; a store that cannot tell may
   * resolve after a short interval. It never rejects.
   */
  waitForChange?(sessionId: string, timeoutMs: number): Promise<void>;
  /** Optional: release resources the store itself created. Never closes a client it was given. */
  close?(): Promise<void>;
}
