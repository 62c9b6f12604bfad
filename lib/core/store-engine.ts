// The storage the callback, the refresh and the middleware work with (the engine), split by job:
// token records, refresh locks, one-time counters, and optional parts: change notices, an entry's
// checks before its code exchange in one step, a new login's writes in one step, durability. Every
// store gets it derived from the public contract (token-store.ts) by derived-engine.ts; a shipped
// store adds fast paths (StoreFastPaths) that replace derived steps with one round trip. Every part
// is keyed by the session key, `hashSessionId(req.sessionID)`, computed once by the caller: a store
// never sees a raw session id, and a job holding only an openId reaches a login through the player
// index.
import type { TokenRecord } from './token-record';
import type { StoredValue } from './token-store';

/** What a read of a session's record found. */
export type RecordRead =
  /** The record; it may be frozen and shared between requests: read-only. */
  | { status: 'found'; record: TokenRecord }
  /** No record: the login ended (or never was). */
  | { status: 'absent' }
  /**
   * A record this process cannot read (a key it lacks, a record it cannot decrypt or parse).
   * Not an ended login: another process may read it.
   */
  | { status: 'unreadable'; reason: UnreadableReason };

/** Why a stored record could not be read. */
export type UnreadableReason = 'decrypt' | 'parse' | 'unknown_key';

/** Options of a compare-and-set write. */
export interface PutOptions {
  /**
   * The version the stored record must have for the write to happen, or `null` when no record
   * may exist yet (a fresh login).
   */
  expectedVersion: number | null;
  /** Time to live of the record in milliseconds (the store may cap it). */
  ttlMs: number;
  /**
   * A fresh login only: {@link TokenRecords.loginGeneration} as read before the code was exchanged
   * (the player is not known before). The write is refused (`false`) when `deletePlayer` ran for
   * `record.openId` since that read, i.e. while the entry was under way. Without it, a write that
   * races a `deletePlayer` is still either refused or deleted by it.
   */
  loginGeneration?: string;
}

/** Options of a delete. */
export interface DeleteOptions {
  /** Delete only while the stored record still has this version. */
  expectedVersion?: number;
  /**
   * A logout the player asked for: where the store waits for a replica, rejects with
   * `StoreUnavailableError` unless one holds the deletion (docs/durability.md).
   */
  logout?: boolean;
}

/** A live login of a player, as {@link TokenRecords.loginsOf} lists it. */
export interface PlayerLogin {
  sessionKey: string;
  /** When the record's lifetime in the store ends, epoch milliseconds. */
  expiresAt: number;
}

/** A fixed-window counter as {@link OneTimeCounters.countInWindow} resolves it. */
export interface WindowCount {
  /** Counts in the current window (0 when none). */
  count: number;
  /** Milliseconds until the window ends (0 when no window is open). */
  resetInMs: number;
}

/**
 * Token records and the per-player index. Required. The `openId` a method takes is the key of a
 * player index: a record's own (core/player-key.ts: its openId, prefixed by its registration but
 * for the first one) or a unionid's, under which the package renews a joined login as well.
 */
export interface TokenRecords {
  /** Reads the session's record: found, absent, or unreadable by this process. */
  get(sessionKey: string): Promise<RecordRead>;
  /**
   * Optional, for a store that serves records from this process's memory: the answer `get` would
   * give, at once, from memory, or `undefined` when only the backend can answer (then the package
   * calls `get`); `undefined` for a key `get` would refuse. Never calls the backend, never throws.
   * Synchronous, so that a request served from memory waits for nothing. The package times and
   * counts only reads that reach the backend (`storeCall`, `epl_store_duration_seconds`), so the
   * store's latency is the backend's, and a read from memory costs no timing.
   */
  cachedRead?(sessionKey: string): RecordRead | undefined;
  /**
   * Writes `record` only if the stored version equals `options.expectedVersion` (`null`: no record
   * stored, and with `loginGeneration`, the player's generation unchanged). Indexes the session
   * under `record.openId`. Resolves `true` when written, `false` when another writer got there first.
   */
  put(sessionKey: string, record: TokenRecord, options: PutOptions): Promise<boolean>;
  /**
   * Deletes the session's record; with `expectedVersion`, only while it still has that version.
   * Resolves `true` when a record was deleted.
   */
  delete(sessionKey: string, options?: DeleteOptions): Promise<boolean>;
  /**
   * The record and its index entry live `ttlMs` more from now, without rewriting the record.
   * Resolves `false` when there is no record.
   */
  renew(sessionKey: string, openId: string, ttlMs: number): Promise<boolean>;
  /** The player's live logins, freshest (latest expiry, i.e. last written or renewed) first. */
  loginsOf(openId: string): Promise<PlayerLogin[]>;
  /**
   * Deletes every record of the player, on every process at once; resolves how many. First moves
   * the {@link loginGeneration} and marks the player logged out at it, so a login of this player
   * that read the generation before is refused at its `put`.
   */
  deletePlayer(openId: string): Promise<number>;
  /**
   * The store's log-out generation now, an opaque string to hand back in `PutOptions`: read before
   * a code exchange, when the player is not yet known.
   */
  loginGeneration(): Promise<string>;
}

/** Refresh coordination: one refresh of a session at a time, across processes. Required. */
export interface RefreshLocks {
  /** Takes the session's lock for `ttlMs`; resolves a random owner, `undefined` when held. */
  acquire(sessionKey: string, ttlMs: number): Promise<string | undefined>;
  /** Gives the lock `ttlMs` more from now, only if `owner` still holds it. */
  extend(sessionKey: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Releases the lock only if `owner` still holds it. Resolves `true` when released. */
  release(sessionKey: string, owner: string): Promise<boolean>;
  /**
   * No process may call the platform to refresh version `version` of the session's record for
   * `ttlMs` (the platform's Retry-After, or a cooldown after a failure).
   */
  hold(sessionKey: string, version: number, ttlMs: number): Promise<void>;
  /** Milliseconds left of a hold on `version`; 0 when none. */
  heldMs(sessionKey: string, version: number): Promise<number>;
}

/** One-time claims and failure counters. Required. */
export interface OneTimeCounters {
  /**
   * Claims a one-time key (a hash of an authorization code) for `ttlMs`. Resolves `true` for the
   * first claim, `false` when the key was claimed before.
   */
  claimOnce(key: string, ttlMs: number): Promise<boolean>;
  /**
   * Adds `increment` (1, 0 to only read, or -1 to give back a count taken in this window) to the
   * counter `key`. A window of `windowMs` opens with the counter's first count; when it ends the
   * counter is gone; a give-back that leaves 0 ends the window too, and none opens a window.
   */
  countInWindow(key: string, increment: -1 | 0 | 1, windowMs: number): Promise<WindowCount>;
}

/** What an entry reads and takes before its code is exchanged, in {@link EntryChecks.begin}. */
export interface EntryBegin {
  /**
   * The client address's counter (a {@link OneTimeCounters.countInWindow} key), or `undefined`
   * when the failure limit is off. An entry that goes on reserves one count on it, which the
   * package gives back (increment -1) when the entry succeeds or fails on the platform's account.
   */
  failureKey: string | undefined;
  /**
   * The address's counter of failed entries alone (the package counts them after the fact), read
   * to tell an address with failures from one with none; set whenever `failureKey` is.
   */
  failedKey: string | undefined;
  /** Counts (failed and reserved entries) at which the address is refused. */
  failureLimit: number;
  /** The counter's window. */
  failureWindowMs: number;
  /** The hold on code exchanges, as {@link RefreshLocks.hold} keeps it: its name and version. */
  holdKey: string;
  holdVersion: number;
  /**
   * While the hold is on, an entry from an address with no failed entry may still probe the platform: one per `probeTtlMs` across processes
   * ({@link OneTimeCounters.claimOnce} of `probeKey`).
   */
  probeKey: string;
  probeTtlMs: number;
  /**
   * The budget of exchanges per second for addresses with failed entries (a
   * {@link OneTimeCounters.countInWindow} key with a 1 s window), or `undefined` when off: such an
   * entry takes one of it before its exchange, and the package gives it back unless the entry
   * fails on its code, so the budget bounds failed exchanges and exchanges in flight alike.
   */
  budgetKey: string | undefined;
  budgetPerSecond: number;
  /** The code's one-time key and how long it is remembered ({@link OneTimeCounters.claimOnce}). */
  claimKey: string;
  claimTtlMs: number;
}

/** Why {@link EntryChecks.begin} stopped an entry before its code was claimed. */
export type EntryStop =
  /** The address reached its limit; `retryInMs`: what is left of its window. */
  | 'failures'
  /** Exchanges are held and this entry may not probe; `retryInMs`: what is left of the hold. */
  | 'held'
  /** Held, and another entry probes the platform now; `retryInMs`: until the next probe. */
  | 'probed'
  /** The budget for addresses with failures is spent this second; `retryInMs`: until the next. */
  | 'budget';

/** What {@link EntryChecks.begin} found; a step that was not reached reads as not taken. */
export interface EntryBeginning {
  /** Set when the entry was stopped before its claim, with the milliseconds until it may retry. */
  stopped: { reason: EntryStop; retryInMs: number } | undefined;
  /** Whether the address's counter holds one count for this entry (to give back unless it fails). */
  reserved: boolean;
  /** Whether this entry probes a held platform (its success ends the hold). */
  probing: boolean;
  /** Whether the budget holds one for this entry (to give back unless it fails on its code). */
  budgeted: boolean;
  /** Whether this call claimed the code; `undefined` when stopped first. */
  claimed: boolean | undefined;
  /** The login generation, read once the code was claimed ({@link TokenRecords.loginGeneration}). */
  loginGeneration: string | undefined;
}

/**
 * An entry's checks before its code exchange, in one step (optional): what core/entry-begin.ts
 * does with the calls of the other parts, atomically. RedisTokenStore makes them one script, one
 * round trip per entry.
 */
export interface EntryChecks {
  begin(entry: EntryBegin): Promise<EntryBeginning>;
}

/** A counter count to give back, as {@link OneTimeCounters.countInWindow} with increment -1. */
export interface CountGiveBack {
  key: string;
  windowMs: number;
}

/**
 * The session a new login is written with, as the session store would write it itself: the Redis
 * key (the session store's prefix and the session id, before the client's own key prefix), the
 * stored value, and its lifetime in seconds (0 or less: the session is deleted, as the store's own
 * write would). `replaces`: the key of the session it replaces (express-session's `regenerate`),
 * deleted in the same step whatever the outcome of the record's write.
 */
export interface LoginSessionWrite {
  key: string;
  value: string;
  ttlSeconds: number;
  replaces: string | undefined;
}

/** A new login's writes, made in one step by {@link LoginWrites.put}. */
export interface LoginWrite {
  sessionKey: string;
  record: TokenRecord;
  /** Time to live of the record in milliseconds (the store may cap it). */
  ttlMs: number;
  /** {@link PutOptions.loginGeneration}: the write is refused when the player was logged out since. */
  loginGeneration: string;
  /** The entry's reservation on the address's counter, given back when the record is written. */
  giveBack: CountGiveBack | undefined;
  /** The new session, written only when the record is; the session it replaces deleted anyway. */
  session: LoginSessionWrite | undefined;
}

/**
 * A new login's writes in one step (optional; RedisTokenStore where every key is on one server):
 * {@link TokenRecords.put} of a fresh record with its login generation, and with it the entry's
 * count given back and the session written, the old one deleted. One round trip after the code
 * exchange instead of one per write.
 */
export interface LoginWrites {
  /** Resolves `true` when the record (and the session) were written, `false` as `put` would. */
  put(write: LoginWrite): Promise<boolean>;
  /**
   * Whether a session store on `client` (the Redis client it was given) writes where this store
   * does, so that its session can go into {@link put}: the same client object.
   */
  sharesClient(client: object): boolean;
}

/**
 * Change notices (optional). Without them, a request waiting for another process's refresh polls
 * the record every 25–75 ms; with them it wakes on the change (and still re-reads at least every
 * 250 ms).
 */
export interface RecordChanges {
  /**
   * `onChange` is called (possibly spuriously) whenever the session's record or lock may have
   * changed anywhere, and once for every watcher when changes may have been missed (channel
   * down/up, FLUSHDB, SWAPDB). Never throws. Returns an unsubscribe. No per-watch backend traffic.
   */
  watch(sessionKey: string, onChange: () => void): () => void;
  /** True while notices are reliable; false: callers poll. */
  readonly live: boolean;
}

/**
 * Durability through a failover (optional; RedisTokenStore's, docs/durability.md). The store makes
 * a refresh's write and a deletion durable itself (a deletion no replica acknowledged rejects with
 * `StoreUnavailableError`); the entry asks once its session is saved too, and a refresh that a
 * request must wait for asks with {@link Durability.settled}.
 */
export interface Durability {
  /**
   * Resolves once a replica holds every write made so far where the session's record lives, and
   * where `session` (express-session's store and the session id) keeps it when that store is on
   * the same Redis client (at once when there is no replica; after the timeout when none answers). Rejects with
   * `StoreUnavailableError` when the server went away first: the writes may be lost with it.
   */
  confirm(sessionKey: string, session?: { store: unknown; sid: string }): Promise<void>;
  /**
   * Resolves once this process's last refreshed record of the session is on a replica, or kept in
   * memory to be written again on a new primary (at once when none is waiting). `records.put`
   * of a refresh resolves before that, so a request with a usable token never waits for a replica.
   */
  settled(sessionKey: string): Promise<void>;
  /**
   * Resolves once a replica holds the deletion of these sessions' records (none: the writes
   * beside player index `player`); a deletion none holds is done again until one does. Rejects
   * with `StoreUnavailableError` when no replica acknowledged in time: a logout answered must
   * survive a failover, whichever process dies.
   */
  loggedOut(sessionKeys: readonly string[], player?: string): Promise<void>;
  /**
   * True for a while after the store lost its server: a refresh token the platform refuses may
   * have been retired by a refresh whose record another process is writing back.
   */
  readonly unsettled: boolean;
}

/**
 * What the package works with, whatever the store: token records, refresh locks, one-time counters,
 * and optional parts. Every method rejects with `StoreUnavailableError` when the backend fails or
 * does not answer in time; it never hangs. A wrong argument is a `TypeError`. Derived from the
 * store's contract (derived-engine.ts) with the store's fast paths. Not part of the public API.
 */
export interface StoreEngine {
  readonly records: TokenRecords;
  readonly locks: RefreshLocks;
  readonly counters: OneTimeCounters;
  readonly changes?: RecordChanges | undefined;
  readonly entries?: EntryChecks | undefined;
  readonly durability?: Durability | undefined;
  readonly logins?: LoginWrites | undefined;
}

/** Where a session store on Redis keeps a session (RedisSessionStore says so under this symbol). */
export interface SessionRedisKeys {
  /** The Redis client the session store was given. */
  readonly client: object;
  /** The session's key, as the store names it (the client's own key prefix not included). */
  keyOf(sid: string): string;
}
export const SESSION_REDIS_KEYS = Symbol.for('express-platform-login.session-redis-keys');

/**
 * What a shipped store adds to the contract, under {@link STORE_FAST_PATHS}: each part replaces
 * derived steps (derived-engine.ts, entry-begin.ts) by one round trip or by memory, with the same
 * answers on the same keys and values (test/integration/fast-paths.test.ts holds them to it).
 */
export interface StoreFastPaths {
  /**
   * The value `get(key)` would resolve, at once from this process's memory; `undefined` when only
   * the backend can answer. Never calls the backend, never throws; the same object while the
   * value is unchanged, so what is decoded from it is decoded once.
   */
  cachedGet?(key: string): StoredValue | undefined;
  /** Whether the contract's `watch` notices are reliable now; without it, they always are. */
  watchLive?(): boolean;
  /** {@link EntryChecks.begin} on the contract's keys and values, in one call. */
  beginEntry?(entry: EntryBegin): Promise<EntryBeginning>;
  /** {@link LoginWrites.put}, `value` being the record as the engine stores it. */
  putNewLogin?(write: LoginWrite, value: string): Promise<boolean>;
  /**
   * Deletes the value at `key` only while it is `value`, in one step: a lock's release, which the
   * derived steps make a read and a delete of the version read (a lock that lapsed and was taken
   * again in between may start over at that version).
   */
  deleteIfValue?(key: string, value: string): Promise<boolean>;
  /** The value at `key` lives `ttlMs` more only while it is `value`, in one step: a lock's extension. */
  renewIfValue?(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** {@link LoginWrites.sharesClient}; set with `putNewLogin`. */
  sharesClient?(client: object): boolean;
  /** Durability through a failover. */
  durability?: Durability;
}

/** Where a shipped store keeps its fast paths. */
export const STORE_FAST_PATHS = Symbol.for('express-platform-login.store-fast-paths');
