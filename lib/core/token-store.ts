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
 * Optional: `sessionsOf` and `deletePlayer` (a per-player index, for log-out-everywhere),
 * `waitForChange` (wakes refresh waiters early), `close()` (called on shutdown), and being an
 * EventEmitter of {@link TokenStoreEvents}.
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
   * Writes `record` only if the stored version equals `options.expectedVersion` (`null`: no record
   * stored). Resolves `true` when written, `false` when another writer got there first.
   */
  put(sessionId: string, record: TokenRecord, options: PutOptions): Promise<boolean>;
  /**
   * Deletes the record of a session; with `expectedVersion`, only while it still has that version.
   * Resolves `true` when a record was deleted.
   */
  delete(sessionId: string, options?: { expectedVersion?: number }): Promise<boolean>;
  /**
   * Takes the refresh lock of a session for `ttlMs`. Resolves a random owner value when taken,
   * `undefined` when another owner holds it.
   */
  acquireLock(sessionId: string, ttlMs: number): Promise<string | undefined>;
  /** Releases the lock only if `owner` still holds it. Resolves `true` when released. */
  releaseLock(sessionId: string, owner: string): Promise<boolean>;
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
   * every process at once. Resolves how many were deleted.
   */
  deletePlayer?(openId: string): Promise<number>;
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
