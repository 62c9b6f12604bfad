// The in-process copy of token records kept by RedisTokenStore: a bounded LRU of decoded records by
// session key, emptied key by key as Redis reports changes, guarded against the in-flight read race.
// CachedRecords (cached-records.ts) serves reads from it.
import type { TokenRecord } from '../core/token-record';
import type { RecordRead } from '../core/store-engine';
import { ChangeWatchers } from './change-waiters';

/** A record held in memory, or a known absence (Redis has no record). */
export interface CachedRecord {
  /** The answer of a read served from this entry (`found` or `absent`), made once and frozen. */
  readonly read: RecordRead;
  /** Read since the eviction scan last passed it: it gets a second chance (see #evictOne). */
  used: boolean;
  /** The record's Redis key, to find the entry again when Redis reports that key changed. */
  readonly key: string;
  /** When Redis drops the record by its TTL, epoch milliseconds (`Infinity`: no TTL). */
  readonly expiresAt: number;
}

/** What a read from Redis remembers from its start, to know at its end whether it may be cached. */
export interface ReadTicket {
  readonly key: string;
  readonly generation: number;
  readonly sequence: number;
}

interface ReadsInFlight {
  readers: number;
  /** Sequence number of the last change of the key reported while these reads were in flight. */
  changedAt: number;
}

/** Freezes a record (and its scope) so that no caller can change what other requests are served. */
function frozen(record: TokenRecord): TokenRecord {
  Object.freeze(record.scope);
  return Object.freeze(record);
}

const ABSENT: RecordRead = Object.freeze({ status: 'absent' });

/**
 * Decoded token records by session key, at most `maxEntries`. When full, the oldest entry not read
 * since the eviction scan last passed it goes (second chance: least recently used, approximately,
 * without reordering the map on every hit).
 *
 * It serves nothing while it is off (`setActive(false)`, the state it starts in): the owner turns
 * it on only while Redis's invalidation messages reach it. A read that was in flight when its key
 * changed (or when the cache was emptied, switched off or on) is not cached: its answer may be
 * older than the change, and no later message would remove it.
 */
export class RecordCache {
  readonly #maxEntries: number;
  /** Map order is insertion order (the eviction scan's); a hit only sets `used`. */
  readonly #entries = new Map<string, CachedRecord>();
  /*
   * The same entries by session key, for lookups: a null-prototype object in dictionary mode. A
   * Map compares a string key made per request with its stored one through a call into V8's
   * runtime (about 0.3 µs in a busy server), while a property lookup finds the key's one interned
   * copy in V8's string table and then compares pointers.
   */
  #byId: Record<string, CachedRecord> = Object.create(null) as Record<string, CachedRecord>;
  /** Session key by Redis key. */
  readonly #sessionByKey = new Map<string, string>();
  readonly #reads = new Map<string, ReadsInFlight>();
  /** Watchers of watch() by Redis key. */
  readonly #waiters = new ChangeWatchers();
  /** Bumped by every reported change; orders changes against the start of reads. */
  #sequence = 0;
  /** Bumped whenever the whole cache is emptied or switched: reads started before do not count. */
  #generation = 0;
  #active = false;

  /** Told the session of each entry that Redis reported changed, so its owner can read it again. */
  readonly #onReported: ((sessionKey: string) => void) | undefined;

  constructor(maxEntries: number, onReported?: (sessionKey: string) => void) {
    this.#maxEntries = maxEntries;
    this.#onReported = onReported;
  }

  /** True while changes reach the cache, so that it may serve records. */
  get active(): boolean {
    return this.#active;
  }

  /** How many records are held. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * What the cache knows of a session: its entry, whose `read` is `absent` where Redis has none;
   * `undefined` when it knows nothing (then read Redis).
   */
  entryOf(sessionKey: string, now: number = Date.now()): CachedRecord | undefined {
    const entry = this.#byId[sessionKey];
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.#remove(sessionKey, entry.key);
      return undefined;
    }
    entry.used = true;
    return entry;
  }

  /** Call before sending a read of `key` to Redis; pass the ticket to endRead or abandonRead. */
  beginRead(key: string): ReadTicket {
    const reads = this.#reads.get(key);
    if (reads === undefined) this.#reads.set(key, { readers: 1, changedAt: 0 });
    else reads.readers += 1;
    return { key, generation: this.#generation, sequence: this.#sequence };
  }

  /**
   * True while the read of `ticket` is in flight and nothing it may predate has been reported: a
   * request that arrives meanwhile may take its answer instead of sending a read of its own.
   */
  unchangedSince(ticket: ReadTicket): boolean {
    if (ticket.generation !== this.#generation) return false;
    const reads = this.#reads.get(ticket.key);
    return reads !== undefined && reads.changedAt <= ticket.sequence;
  }

  /**
   * Call with what the read returned. It is cached unless the cache is off or the key changed (or
   * the cache was emptied) since beginRead. `ttlMs` is the key's PTTL (`-1`: none, `-2`: no key).
   * `keepAbsence`: an absent record is held as such when Redis had no key (PTTL -2; the read that
   * follows Redis's report of a held record: its session's next request is then refused without a
   * read). That is safe because the tracking covers every key under the prefix, read or not: a
   * later write of the key is reported and drops the absence. A record the owner could not read
   * (its key exists) is not held, so it is read again and may open once the configuration is
   * fixed; other reads that find nothing keep nothing, so probes and stray ids do not fill it.
   */
  endRead(
    ticket: ReadTicket,
    sessionKey: string,
    record: TokenRecord | undefined,
    ttlMs: number,
    now: number,
    keepAbsence = false,
  ): void {
    const changedAt = this.#finishRead(ticket.key);
    if (
      !this.#active ||
      ticket.generation !== this.#generation ||
      changedAt > ticket.sequence ||
      // A record is held while its key exists; an absence only when asked and Redis had no key.
      (record === undefined ? !keepAbsence || ttlMs !== -2 : ttlMs === -2)
    ) {
      return;
    }
    const previous = this.#entries.get(sessionKey);
    if (previous !== undefined) this.#remove(sessionKey, previous.key);
    if (this.#entries.size >= this.#maxEntries) this.#evictOne();
    const held = record === undefined ? undefined : frozen(record);
    const read: RecordRead =
      held === undefined ? ABSENT : Object.freeze({ status: 'found' as const, record: held });
    const entry: CachedRecord = {
      read,
      used: false,
      key: ticket.key,
      expiresAt: ttlMs >= 0 ? now + ttlMs : Infinity,
    };
    this.#entries.set(sessionKey, entry);
    this.#byId[sessionKey] = entry;
    this.#sessionByKey.set(ticket.key, sessionKey);
  }

  /** Drops the oldest entry not read since the last pass; read ones move to the end, unmarked. */
  #evictOne(): void {
    for (const [sessionKey, entry] of this.#entries) {
      if (!entry.used) {
        this.#remove(sessionKey, entry.key);
        return;
      }
      entry.used = false;
      this.#entries.delete(sessionKey);
      this.#entries.set(sessionKey, entry);
    }
  }

  /** Call when a read failed: nothing is cached. */
  abandonRead(ticket: ReadTicket): void {
    this.#finishRead(ticket.key);
  }

  /** This process changes `key` (its own write or delete): the entry goes, waiters wake. */
  invalidate(key: string): void {
    this.#drop(key);
    this.#waiters.wake(key);
  }

  /**
   * Redis reported that `key` changed (written, deleted, expired). An entry this process held is
   * read again at once (`onReported`): the request that comes for it next, often already waiting
   * on its session read, then takes that read's answer instead of sending one more round trip.
   * Waiters wake after the read is sent, so that they take its answer too.
   */
  reported(key: string): void {
    const sessionKey = this.#drop(key);
    if (sessionKey !== undefined && this.#active) this.#onReported?.(sessionKey);
    this.#waiters.wake(key);
  }

  /** Orders a change of `key` after the reads in flight and drops its entry; returns its session. */
  #drop(key: string): string | undefined {
    this.#sequence += 1;
    const reads = this.#reads.get(key);
    if (reads !== undefined) reads.changedAt = this.#sequence;
    const sessionKey = this.#sessionByKey.get(key);
    if (sessionKey !== undefined) this.#remove(sessionKey, key);
    return sessionKey;
  }

  /** Every record may have changed (FLUSHDB, a lost connection): drop them all, wake every waiter. */
  invalidateAll(): void {
    this.#generation += 1;
    this.#sequence += 1;
    this.#entries.clear();
    this.#byId = Object.create(null) as Record<string, CachedRecord>;
    this.#sessionByKey.clear();
    this.#waiters.wakeAll();
  }

  /** Switches serving on (changes reach the cache) or off; either way starts from empty. */
  setActive(active: boolean): void {
    if (active === this.#active && !active) return;
    this.#active = active;
    this.invalidateAll();
  }

  /** Calls `onChange` whenever one of `keys` changes or the cache is emptied or switched. */
  watch(keys: readonly string[], onChange: () => void): () => void {
    return this.#waiters.watch(keys, onChange);
  }

  #finishRead(key: string): number {
    const reads = this.#reads.get(key);
    if (reads === undefined) return Infinity;
    reads.readers -= 1;
    if (reads.readers === 0) this.#reads.delete(key);
    return reads.changedAt;
  }

  #remove(sessionKey: string, key: string): void {
    this.#entries.delete(sessionKey);
    delete this.#byId[sessionKey];
    if (this.#sessionByKey.get(key) === sessionKey) this.#sessionByKey.delete(key);
  }
}
