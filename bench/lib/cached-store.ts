// A diagnostic for the hot path, not a store to ship: keeps every record it read in process memory
// and serves later reads from there, so a run with it shows what the per-request Redis read costs.
// It never sees what another process writes (a logout, a refresh), which is why the package reads.
import type { RecordRead, TokenRecords, TokenStore } from '../../lib/core/token-store';

/** Wraps a store; `records.get` answers from memory after the first read of a session. */
export class ReadCachingStore implements TokenStore {
  readonly #reads = new Map<string, RecordRead>();
  readonly records: TokenRecords;
  readonly locks: TokenStore['locks'];
  readonly counters: TokenStore['counters'];

  constructor(inner: TokenStore) {
    const records = inner.records;
    this.locks = inner.locks;
    this.counters = inner.counters;
    this.records = {
      get: async (sessionKey) => {
        const cached = this.#reads.get(sessionKey);
        if (cached !== undefined) return cached;
        const read = await records.get(sessionKey);
        if (read.status === 'found') this.#reads.set(sessionKey, read);
        return read;
      },
      put: (sessionKey, record, options) => {
        this.#reads.delete(sessionKey);
        return records.put(sessionKey, record, options);
      },
      delete: (sessionKey, options) => {
        this.#reads.delete(sessionKey);
        return records.delete(sessionKey, options);
      },
      renew: (sessionKey, openId, ttlMs) => records.renew(sessionKey, openId, ttlMs),
      loginsOf: (openId) => records.loginsOf(openId),
      deletePlayer: (openId) => records.deletePlayer(openId),
      loginGeneration: () => records.loginGeneration(),
    };
  }
}
