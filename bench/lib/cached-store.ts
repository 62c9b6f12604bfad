// A diagnostic for the hot path, not a store to ship: keeps every record it read in process memory
// and serves later reads from there, so a run with it shows what the per-request Redis read costs.
// It never sees what another process writes (a logout, a refresh), which is why the package reads.
import type { PutOptions, TokenStore } from '../../lib/core/token-store';
import type { TokenRecord } from '../../lib/core/token-record';

/** Wraps a store; `get` answers from memory after the first read of a session. */
export class ReadCachingStore implements TokenStore {
  readonly #records = new Map<string, TokenRecord>();

  constructor(private readonly inner: TokenStore) {}

  getCached(sessionId: string): TokenRecord | undefined {
    return this.#records.get(sessionId);
  }

  async get(sessionId: string): Promise<TokenRecord | undefined> {
    const cached = this.#records.get(sessionId);
    if (cached !== undefined) return cached;
    const record = await this.inner.get(sessionId);
    if (record !== undefined) this.#records.set(sessionId, record);
    return record;
  }

  put(sessionId: string, record: TokenRecord, options: PutOptions): Promise<boolean> {
    this.#records.delete(sessionId);
    return this.inner.put(sessionId, record, options);
  }

  delete(sessionId: string, options?: { expectedVersion?: number }): Promise<boolean> {
    this.#records.delete(sessionId);
    return this.inner.delete(sessionId, options);
  }

  acquireLock(sessionId: string, ttlMs: number): Promise<string | undefined> {
    return this.inner.acquireLock(sessionId, ttlMs);
  }

  releaseLock(sessionId: string, owner: string): Promise<boolean> {
    return this.inner.releaseLock(sessionId, owner);
  }

  claimOnce(key: string, ttlMs: number): Promise<boolean> {
    return this.inner.claimOnce(key, ttlMs);
  }
}
