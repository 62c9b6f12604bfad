// The storage the callback, the refresh and the middleware work with (the engine), split by job.
// Every store gets it derived from the public contract (token-store.ts) by derived-engine.ts; a
// shipped store adds fast paths. Each part's contract is in docs/engine.md.
import type { TokenRecord } from './token-record';
import type { StorePutOptions, StoredValue } from './token-store';

/** What a read of a session's record found (docs/engine.md, "Records"). */
export type RecordRead =
  /** The record; it may be frozen and shared between requests: read-only. */
  | { status: 'found'; record: TokenRecord }
  | { status: 'absent' }
  /** Not an ended login: another process may read it. */
  | { status: 'unreadable'; reason: UnreadableReason };

/** Why a stored record could not be read. */
export type UnreadableReason = 'decrypt' | 'parse' | 'unknown_key';

/** Options of a compare-and-set write (`expectedVersion` `null`: a fresh login). */
export interface PutOptions extends StorePutOptions {
  /** A fresh login only: the generation read before the code exchange. */
  loginGeneration?: string;
}

/** Options of a delete. */
export interface DeleteOptions {
  expectedVersion?: number;
  /** A logout the player asked for: rejects unless a replica holds it (docs/durability.md). */
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
  count: number;
  /** 0 when no window is open. */
  resetInMs: number;
}

/** Token records and the per-player index (`openId`: the key of a player index). */
export interface TokenRecords {
  get(sessionKey: string): Promise<RecordRead>;
  /** From memory only, synchronous; `undefined` when only the backend can answer. */
  cachedRead?(sessionKey: string): RecordRead | undefined;
  put(sessionKey: string, record: TokenRecord, options: PutOptions): Promise<boolean>;
  delete(sessionKey: string, options?: DeleteOptions): Promise<boolean>;
  renew(sessionKey: string, openId: string, ttlMs: number): Promise<boolean>;
  /** Freshest first. */
  loginsOf(openId: string): Promise<PlayerLogin[]>;
  deletePlayer(openId: string): Promise<number>;
  loginGeneration(): Promise<string>;
}

/** Refresh coordination: one refresh of a session at a time, across processes; refresh holds. */
export interface RefreshLocks {
  acquire(sessionKey: string, ttlMs: number): Promise<string | undefined>;
  extend(sessionKey: string, owner: string, ttlMs: number): Promise<boolean>;
  release(sessionKey: string, owner: string): Promise<boolean>;
  hold(sessionKey: string, version: number, ttlMs: number): Promise<void>;
  heldMs(sessionKey: string, version: number): Promise<number>;
}

/** One-time claims and failure counters. */
export interface OneTimeCounters {
  claimOnce(key: string, ttlMs: number): Promise<boolean>;
  countInWindow(key: string, increment: -1 | 0 | 1, windowMs: number): Promise<WindowCount>;
}

/** What an entry reads and takes before its code is exchanged (docs/engine.md, "An entry's checks"). */
export interface EntryBegin {
  /** The address's counter; `undefined` when the failure limit is off. */
  failureKey: string | undefined;
  /** The address's counter of failed entries alone; set whenever `failureKey` is. */
  failedKey: string | undefined;
  failureLimit: number;
  failureWindowMs: number;
  holdKey: string;
  holdVersion: number;
  probeKey: string;
  probeTtlMs: number;
  /** The per-second budget for addresses with failed entries; `undefined` when off. */
  budgetKey: string | undefined;
  budgetPerSecond: number;
  claimKey: string;
  claimTtlMs: number;
}

/** Why {@link EntryChecks.begin} stopped an entry before its code was claimed. */
export type EntryStop = 'failures' | 'held' | 'probed' | 'budget';

/** What {@link EntryChecks.begin} found; a step that was not reached reads as not taken. */
export interface EntryBeginning {
  stopped: { reason: EntryStop; retryInMs: number } | undefined;
  /** The address's counter holds one count for this entry. */
  reserved: boolean;
  /** This entry probes a held platform. */
  probing: boolean;
  /** The budget holds one for this entry. */
  budgeted: boolean;
  /** `undefined` when stopped first. */
  claimed: boolean | undefined;
  loginGeneration: string | undefined;
}

/** An entry's checks in one step (optional). */
export interface EntryChecks {
  begin(entry: EntryBegin): Promise<EntryBeginning>;
}

/** A counter count to give back, as {@link OneTimeCounters.countInWindow} with increment -1. */
export interface CountGiveBack {
  key: string;
  windowMs: number;
}

/**
 * The session a new login is written with, as the session store would write it (`key` without the
 * client's own key prefix; `ttlSeconds` 0 or less deletes it); `replaces`: deleted anyway.
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
  ttlMs: number;
  loginGeneration: string;
  /** The entry's reservation, given back when the record is written. */
  giveBack: CountGiveBack | undefined;
  /** Written only when the record is. */
  session: LoginSessionWrite | undefined;
}

/** A new login's writes in one step (optional; docs/engine.md, "A new login's writes"). */
export interface LoginWrites {
  put(write: LoginWrite): Promise<boolean>;
  /** Whether a session store on `client` writes where this store does. */
  sharesClient(client: object): boolean;
}

/** Change notices (optional). */
export interface RecordChanges {
  /** Called on a possible change of the session's record or lock; returns an unsubscribe. */
  watch(sessionKey: string, onChange: () => void): () => void;
  /** True while notices are reliable; false: callers poll. */
  readonly live: boolean;
}

/** Durability through a failover (optional; docs/engine.md, "Durability"; docs/durability.md). */
export interface Durability {
  confirm(sessionKey: string, session?: { store: unknown; sid: string }): Promise<void>;
  settled(sessionKey: string): Promise<void>;
  loggedOut(sessionKeys: readonly string[], player?: string): Promise<void>;
  readonly unsettled: boolean;
}

/** What the package works with, whatever the store (docs/engine.md). Not part of the public API. */
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
  /** The session's key, the client's own key prefix not included. */
  keyOf(sid: string): string;
}
export const SESSION_REDIS_KEYS = Symbol.for('express-platform-login.session-redis-keys');

/** What a shipped store adds to the contract, with the derived steps' answers (docs/engine.md, "Fast paths"). */
export interface StoreFastPaths {
  cachedGet?(key: string): StoredValue | undefined;
  watchLive?(): boolean;
  beginEntry?(entry: EntryBegin): Promise<EntryBeginning>;
  /**
   * `value`: the record as the engine stores it. Resolves the logins the player's index had no
   * more room for, for the engine to end, or `undefined` when nothing was written.
   */
  putNewLogin?(write: LoginWrite, value: string): Promise<string[] | undefined>;
  deleteIfValue?(key: string, value: string): Promise<boolean>;
  renewIfValue?(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** Set with `putNewLogin`. */
  sharesClient?(client: object): boolean;
  durability?: Durability;
}

/** Where a shipped store keeps its fast paths. */
export const STORE_FAST_PATHS = Symbol.for('express-platform-login.store-fast-paths');
