// The in-process copy of Redis values the record and session caches share (docs/caching.md).
import { ChangeWatchers } from '../util/change-watchers';
import type { KeyChangeListener } from './key-tracking';

/** A value held in memory. */
export interface CacheEntry<V> {
  readonly value: V;
  /** Read since the eviction scan last passed it: it gets a second chance (see #evictOne). */
  used: boolean;
  /** The Redis key, to find the entry again when Redis reports that key changed. */
  readonly key: string;
  /** When Redis drops the key by its TTL, epoch milliseconds (`Infinity`: no TTL). */
  expiresAt: number;
}

/** What a read from Redis remembers from its start, to know at its end whether it may be kept. */
export interface ReadTicket {
  readonly key: string;
  readonly generation: number;
  readonly sequence: number;
}

/**
 * Values by id, at most `maxEntries` (second chance when full), served only while on and within its
 * lease (`listener` switches it), never from a read its key's change overtook (docs/caching.md).
 */
export class TrackedCache<V> {
  /** Map order is insertion order (the eviction scan's); a hit only sets `used`. */
  readonly #entries = new Map<string, CacheEntry<V>>();
  /*
   * The same entries by id, for lookups: a property lookup in a null-prototype object compares
   * interned strings by pointer, where a Map calls into V8's runtime (about 0.3 µs when busy).
   */
  #byId: Record<string, CacheEntry<V>> = Object.create(null) as Record<string, CacheEntry<V>>;
  readonly #idByKey = new Map<string, string>();
  /** Reads in flight by key, and the sequence number of the last change reported meanwhile. */
  readonly #reads = new Map<string, { readers: number; changedAt: number }>();
  readonly #watchers = new ChangeWatchers();
  /** Bumped by every change; orders changes against the start of reads. */
  #sequence = 0;
  /** Bumped whenever the whole cache is emptied or switched: reads started before do not count. */
  #generation = 0;
  #active = false;
  /** The lease's end (epoch ms): no hit after it, whatever the timers do. */
  #servesUntil = 0;

  /** What the key tracking tells this cache. */
  readonly listener: KeyChangeListener = {
    changed: (key) => this.changed(key),
    allChanged: () => this.invalidateAll(),
    renewed: (until) => {
      // The lease's end passed before this renewal (its timer ran late): hits were refused
      // meanwhile, so start from empty, as going off would have.
      if (this.#active && Date.now() >= this.#servesUntil) this.invalidateAll();
      this.#servesUntil = until;
    },
    liveChanged: (live) => this.setActive(live, this.#servesUntil),
  };

  constructor(private readonly maxEntries: number) {}

  /** True while changes reach the cache, so that it may serve. */
  get active(): boolean {
    return this.#active;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The entry of `id` while it may be served; `undefined` when none (then read Redis). */
  entryOf(id: string, now: number = Date.now()): CacheEntry<V> | undefined {
    const entry = this.#byId[id];
    if (entry === undefined || now >= this.#servesUntil) return undefined;
    if (entry.expiresAt <= now) {
      this.#remove(id, entry.key);
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
   * Call with what the read returned: `value` kept as `id`'s until `expiresAt`, unless the cache
   * is off or the key changed (or the cache was emptied) since beginRead.
   */
  endRead(ticket: ReadTicket, id: string, value: V, expiresAt: number): void {
    const changedAt = this.#finishRead(ticket.key);
    if (!this.#active || ticket.generation !== this.#generation || changedAt > ticket.sequence)
      return;
    const previous = this.#entries.get(id);
    if (previous !== undefined) this.#remove(id, previous.key);
    if (this.#entries.size >= this.maxEntries) this.#evictOne();
    const entry: CacheEntry<V> = { value, used: false, key: ticket.key, expiresAt };
    this.#entries.set(id, entry);
    this.#byId[id] = entry;
    this.#idByKey.set(ticket.key, id);
  }

  /** Call when a read failed or its answer is not to be kept: nothing is kept. */
  abandonRead(ticket: ReadTicket): void {
    this.#finishRead(ticket.key);
  }

  /**
   * `key` changed (Redis reported it, or this process writes it): its entry goes, reads in flight
   * are not kept, its watchers are told.
   */
  changed(key: string): void {
    this.#sequence += 1;
    const reads = this.#reads.get(key);
    if (reads !== undefined) reads.changedAt = this.#sequence;
    const id = this.#idByKey.get(key);
    if (id !== undefined) this.#remove(id, key);
    this.#watchers.wake(key);
  }

  /** Every value may have changed (FLUSHDB, a lost connection): drop them all, wake every watcher. */
  invalidateAll(): void {
    this.#generation += 1;
    this.#sequence += 1;
    this.#entries.clear();
    this.#byId = Object.create(null) as Record<string, CacheEntry<V>>;
    this.#idByKey.clear();
    this.#watchers.wakeAll();
  }

  /** Switches serving on (until `servesUntil`, by default for good) or off, starting empty. */
  setActive(active: boolean, servesUntil = Infinity): void {
    if (active === this.#active && !active) return;
    this.#active = active;
    this.#servesUntil = active ? servesUntil : 0;
    this.invalidateAll();
  }

  /** Calls `onChange` whenever one of `keys` changes or the cache is emptied or switched. */
  watch(keys: readonly string[], onChange: () => void): () => void {
    return this.#watchers.watch(keys, onChange);
  }

  /** Drops the oldest entry not read since the last pass; read ones move to the end, unmarked. */
  #evictOne(): void {
    for (const [id, entry] of this.#entries) {
      if (!entry.used) {
        this.#remove(id, entry.key);
        return;
      }
      entry.used = false;
      this.#entries.delete(id);
      this.#entries.set(id, entry);
    }
  }

  #finishRead(key: string): number {
    const reads = this.#reads.get(key);
    if (reads === undefined) return Infinity;
    reads.readers -= 1;
    if (reads.readers === 0) this.#reads.delete(key);
    return reads.changedAt;
  }

  #remove(id: string, key: string): void {
    this.#entries.delete(id);
    delete this.#byId[id];
    if (this.#idByKey.get(key) === id) this.#idByKey.delete(key);
  }
}
