// Which sessions' records the store could not read (its `unreadable` event: a key this process
// lacks, a record it cannot decrypt or parse), so that a request finding no record can tell a
// login that ended from one this process cannot read, which another process may read well.
import { hashSessionId } from './hash';

/** At most this many hashes are kept; the oldest go first (each is taken by the request that read it). */
const MAX_KEPT = 1024;

export class UnreadableSessions {
  readonly #hashes = new Set<string>();

  /** The store reported the record of this session hash unreadable. */
  add(sessionHash: string): void {
    if (this.#hashes.size >= MAX_KEPT) {
      const oldest = this.#hashes.values().next().value;
      if (oldest !== undefined) this.#hashes.delete(oldest);
    }
    this.#hashes.add(sessionHash);
  }

  /**
   * True (once) when the last read of this session's record found it unreadable. The session id
   * is hashed (as the store's event names it) only when some record was reported unreadable.
   */
  take(sessionId: string): boolean {
    return this.#hashes.size > 0 && this.#hashes.delete(hashSessionId(sessionId));
  }
}
