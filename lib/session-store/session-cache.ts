// The sessions a process serves from its memory: the JSON Redis holds for each session key and
// when the key expires, kept only while Redis's reports of changed keys reach the process. Its
// owner (RedisSessionStore, through KeyTracking) switches it on and off and reports every change.

/** One session as Redis holds it. */
interface CachedSession {
  /** The stored JSON, parsed afresh for each request (express-session mutates what it gets). */
  json: string;
  /** Epoch ms when the key expires in Redis (its PTTL at the read). */
  expiresAt: number;
}

/** A read in flight: taken before the read is sent, given back with its answer. */
export interface SessionReadTicket {
  key: string;
  generation: number;
  sequence: number;
}

/**
 * A bounded map of session key → stored JSON. It serves nothing while it is off (the state it
 * starts in). A read that was in flight when its key changed (or when the cache was emptied or
 * switched) is not kept: its answer may predate the change, and no later message would remove it.
 */
export class SessionCache {
  readonly #maxEntries: number;
  /** Insertion order is recency: a hit moves its entry to the end, eviction takes the first. */
  readonly #entries = new Map<string, CachedSession>();
  /** Per key, the sequence number of its last reported change while reads were in flight. */
  readonly #changedAt = new Map<string, number>();
  readonly #readers = new Map<string, number>();
  #sequence = 0;
  #generation = 0;
  #active = false;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** True while changes reach the cache, so that it may serve sessions. */
  get active(): boolean {
    return this.#active;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The stored JSON of `key` and its expiry, or undefined (then read Redis). */
  lookup(key: string, now: number): CachedSession | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  beginRead(key: string): SessionReadTicket {
    this.#readers.set(key, (this.#readers.get(key) ?? 0) + 1);
    return { key, generation: this.#generation, sequence: this.#sequence };
  }

  /**
   * The read's answer: `json` null where Redis had no key; `pttlMs` the key's PTTL (-1: none).
   * Kept when the cache is on, the key has a TTL, and nothing changed since beginRead.
   */
  endRead(ticket: SessionReadTicket, json: string | null, pttlMs: number, now: number): void {
    const changedAt = this.#finishRead(ticket.key);
    if (
      json === null ||
      pttlMs <= 0 ||
      !this.#active ||
      ticket.generation !== this.#generation ||
      changedAt > ticket.sequence
    ) {
      return;
    }
    this.#entries.delete(ticket.key);
    this.#entries.set(ticket.key, { json, expiresAt: now + pttlMs });
    if (this.#entries.size > this.#maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }

  abandonRead(ticket: SessionReadTicket): void {
    this.#finishRead(ticket.key);
  }

  /** The key's expiry moved (this process renewed it): the entry serves until the new time. */
  extend(key: string, expiresAt: number): void {
    const entry = this.#entries.get(key);
    if (entry !== undefined) entry.expiresAt = expiresAt;
  }

  /** This process or Redis changed `key`: the entry goes, reads in flight are not kept. */
  reported(key: string): void {
    this.#sequence += 1;
    if (this.#readers.has(key)) this.#changedAt.set(key, this.#sequence);
    this.#entries.delete(key);
  }

  /** Every session may have changed (FLUSHDB, a lost connection). */
  invalidateAll(): void {
    this.#generation += 1;
    this.#sequence += 1;
    this.#entries.clear();
  }

  /** Switches serving on or off; either way starts from empty. */
  setActive(active: boolean): void {
    this.#active = active;
    this.invalidateAll();
  }

  #finishRead(key: string): number {
    const readers = (this.#readers.get(key) ?? 1) - 1;
    const changedAt = this.#changedAt.get(key) ?? 0;
    if (readers <= 0) {
      this.#readers.delete(key);
      this.#changedAt.delete(key);
    } else {
      this.#readers.set(key, readers);
    }
    return changedAt;
  }
}
