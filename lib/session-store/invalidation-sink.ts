// What an invalidation source (a connection with Redis client tracking) tells a cache.
export interface InvalidationSink {
  /** True while the cache serves. */
  readonly active: boolean;
  /** On while invalidation messages reach the process, off (and emptied) otherwise. */
  setActive(active: boolean): void;
  /** Redis reported `key` changed (written, deleted, expired, evicted). */
  reported(key: string): void;
  /** Every key may have changed (FLUSHDB, FLUSHALL, SWAPDB). */
  invalidateAll(): void;
}
