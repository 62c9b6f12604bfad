// The record cache: token records served from this process's memory while Redis's invalidations
// reach the TrackedCache (docs/caching.md), reads shared while in flight, and read through
// otherwise. Writes go to the records underneath, which drop their own keys from the cache.
import type { TokenRecord } from '../../core/token-record';
import type { PutOptions, RecordRead, TokenRecords } from '../../core/store-engine';
import { TrackedCache, type ReadTicket } from './tracked-cache';

/** What the layer needs underneath: the records, plus a read that also tells the key's lifetime. */
export interface TrackedRecords extends TokenRecords {
  /** The backend key the invalidations name for this session's record. */
  keyOf(sessionKey: string): string;
  /** The read, with the key's remaining lifetime in ms (`-1`: none, `-2`: no key). */
  readWithTtl(sessionKey: string): Promise<{ read: RecordRead; ttlMs: number }>;
}

/** Freezes a record (and its scope) so that no caller can change what other requests are served. */
function frozen(record: TokenRecord): RecordRead {
  Object.freeze(record.scope);
  return Object.freeze({ status: 'found' as const, record: Object.freeze(record) });
}

/** Token records served from memory, each hit the entry's one frozen answer. */
export class CachedRecords implements TokenRecords {
  readonly cache: TrackedCache<RecordRead>;
  readonly #inner: TrackedRecords;
  /** The reads in flight by session key, for requests that arrive meanwhile to share. */
  readonly #readsInFlight = new Map<string, { ticket: ReadTicket; read: Promise<RecordRead> }>();

  constructor(inner: TrackedRecords, maxEntries: number) {
    this.#inner = inner;
    this.cache = new TrackedCache(maxEntries);
  }

  /**
   * A hit costs no clock read beyond the expiry check, no round trip and no decoding: the entry's
   * one frozen answer. Every request sharing a read in flight gets its answer, `unreadable`
   * included. (The middleware asks `cachedRead` first, which answers a hit without a promise.)
   */
  get(sessionKey: string): Promise<RecordRead> {
    // A wrong key is the records' own TypeError, as a rejection.
    if (!this.#fromMemory(sessionKey)) return this.#inner.get(sessionKey);
    const entry = this.cache.entryOf(sessionKey);
    if (entry !== undefined) return Promise.resolve(entry.value);
    return this.#readThrough(sessionKey);
  }

  /** The answer memory holds for the session; `undefined` when a read would go to Redis. */
  cachedRead(sessionKey: string): RecordRead | undefined {
    return this.#fromMemory(sessionKey) ? this.cache.entryOf(sessionKey)?.value : undefined;
  }

  /** While the cache is active, for a key the records would accept. */
  #fromMemory(sessionKey: string): boolean {
    return this.cache.active === true && typeof sessionKey === 'string' && sessionKey !== '';
  }

  put(sessionKey: string, record: TokenRecord, options: PutOptions): Promise<boolean> {
    return this.#inner.put(sessionKey, record, options);
  }
  delete: TokenRecords['delete'] = (sessionKey, options) => this.#inner.delete(sessionKey, options);
  renew: TokenRecords['renew'] = (sessionKey, openId, ttlMs) =>
    this.#inner.renew(sessionKey, openId, ttlMs);
  loginsOf: TokenRecords['loginsOf'] = (openId) => this.#inner.loginsOf(openId);
  deletePlayer: TokenRecords['deletePlayer'] = (openId) => this.#inner.deletePlayer(openId);
  loginGeneration: TokenRecords['loginGeneration'] = () => this.#inner.loginGeneration();

  /**
   * A miss: one read of the session's record in flight at a time, which requests arriving while it
   * is in flight share unless a change was reported since it was sent (then they send their own).
   */
  #readThrough(sessionKey: string): Promise<RecordRead> {
    const shared = this.#readsInFlight.get(sessionKey);
    if (shared !== undefined && this.cache.unchangedSince(shared.ticket)) return shared.read;
    const ticket = this.cache.beginRead(this.#inner.keyOf(sessionKey));
    const read = this.#readAndCache(sessionKey, ticket);
    this.#readsInFlight.set(sessionKey, { ticket, read });
    const done = (): void => {
      if (this.#readsInFlight.get(sessionKey)?.read === read)
        this.#readsInFlight.delete(sessionKey);
    };
    read.then(done, done);
    return read;
  }

  /** The record and its lifetime (so the copy goes when Redis expires the key), cached unless raced. */
  async #readAndCache(sessionKey: string, ticket: ReadTicket): Promise<RecordRead> {
    let answer: { read: RecordRead; ttlMs: number };
    try {
      answer = await this.#inner.readWithTtl(sessionKey);
    } catch (error) {
      this.cache.abandonRead(ticket);
      throw error;
    }
    const { read, ttlMs } = answer;
    // Only a record whose key exists is held (PTTL -1: no TTL). A record this process cannot read
    // is read again, and may open once the configuration is fixed; an absence is never held, so
    // probes and stray ids do not fill memory.
    if (read.status !== 'found' || ttlMs === -2) {
      this.cache.abandonRead(ticket);
      return read;
    }
    const held = frozen(read.record);
    this.cache.endRead(ticket, sessionKey, held, ttlMs >= 0 ? Date.now() + ttlMs : Infinity);
    return held;
  }
}
