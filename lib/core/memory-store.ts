// MemoryTokenStore: the token store of a single process (and of tests): the public contract
// (core/token-store.ts) over a Map, the package's engine derived from it as for any studio's store.
// Bounded in size; expiry is checked when a value is read, so no timer runs.
import type { StorePutOptions, StoredValue, TokenStore } from './token-store';
import { checkClaimKey, checkExpectedVersion, ttlMilliseconds } from './engine-arguments';
import { StoreUnavailableError } from '../errors';
import { ChangeWatchers } from '../util/change-watchers';
import { parseOptions } from '../util/parse-options';
import {
  memoryTokenStoreOptionsSchema,
  type MemoryTokenStoreOptions,
} from './memory-store-options';

const FULL_MESSAGE =
  'MemoryTokenStore holds `maxEntries` unexpired values and refuses new ones until some expire (a flood of made-up entry codes?).';

const checkKey = (key: unknown): void => checkClaimKey(key, 'store key');

/**
 * Token store kept in this process's memory: for a single process and for tests. Everything is
 * lost on restart and not shared between processes; use RedisTokenStore for more than one process.
 */
export class MemoryTokenStore implements TokenStore {
  /** Oldest written first, so a scan for expired values can stop at the first live one. */
  readonly #values = new Map<string, StoredValue>();
  readonly #maxEntries: number;
  readonly #watchers = new ChangeWatchers();

  constructor(options: MemoryTokenStoreOptions = {}) {
    const config = parseOptions(memoryTokenStoreOptionsSchema, options, 'MemoryTokenStore');
    this.#maxEntries = config.maxEntries;
  }

  async get(key: string): Promise<StoredValue | undefined> {
    checkKey(key);
    const stored = this.#live(key);
    // A copy: what the caller does with it never changes the store.
    return stored && { ...stored };
  }

  async put(key: string, value: string, options: StorePutOptions): Promise<number | undefined> {
    checkKey(key);
    if (typeof value !== 'string') throw new TypeError('The value must be a string.');
    const { expectedVersion } = options;
    if (expectedVersion !== null) checkExpectedVersion(expectedVersion);
    const ttlMs = ttlMilliseconds(options.ttlMs);
    const current = this.#live(key);
    if ((current?.version ?? null) !== expectedVersion) return undefined;
    if (current === undefined) this.#makeRoom();
    const version = (current?.version ?? 0) + 1;
    // Re-inserting moves the key to the end: the Map stays in order of writing.
    this.#values.delete(key);
    this.#values.set(key, { value, version, expiresAt: Date.now() + ttlMs });
    this.#watchers.wake(key);
    return version;
  }

  async delete(key: string, expectedVersion?: number): Promise<boolean> {
    checkKey(key);
    checkExpectedVersion(expectedVersion);
    const current = this.#live(key);
    if (current === undefined) return false;
    if (expectedVersion !== undefined && current.version !== expectedVersion) return false;
    this.#values.delete(key);
    this.#watchers.wake(key);
    return true;
  }

  async renew(key: string, ttlMs: number): Promise<boolean> {
    checkKey(key);
    const lifetimeMs = ttlMilliseconds(ttlMs);
    const current = this.#live(key);
    if (current === undefined) return false;
    current.expiresAt = Date.now() + lifetimeMs;
    return true;
  }

  /** Every change happens in this process, under its own eyes. */
  watch(key: string, onChange: () => void): () => void {
    checkKey(key);
    return this.#watchers.watch([key], onChange);
  }

  /** Drops every value. */
  async close(): Promise<void> {
    this.#values.clear();
  }

  /** The unexpired value at `key`; an expired one is dropped, and its watchers told. */
  #live(key: string): StoredValue | undefined {
    const stored = this.#values.get(key);
    if (stored === undefined || stored.expiresAt > Date.now()) return stored;
    this.#values.delete(key);
    this.#watchers.wake(key);
    return undefined;
  }

  /** Drops expired values when full; throws when none has expired. */
  #makeRoom(): void {
    if (this.#values.size < this.#maxEntries) return;
    const now = Date.now();
    for (const [key, stored] of this.#values) {
      if (stored.expiresAt <= now) this.#values.delete(key);
    }
    if (this.#values.size >= this.#maxEntries) throw new StoreUnavailableError(FULL_MESSAGE);
  }
}
