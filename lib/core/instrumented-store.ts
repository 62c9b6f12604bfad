// Wraps a TokenStore so every call to the backend is timed (in seconds) and every failure counted
// in the metrics, part by part. The wrapped store is unchanged. Change notices are passed through
// untimed: a watch is no backend call.
// It is observation, but it lives beside the contract it wraps (token-store.ts): observability/ sits
// below core/ (refresh emits into it), so a wrapper over the contract there would import upwards.
import {
  LABELS,
  STORE_OPERATIONS,
  type PlatformMetrics,
  type StoreOperation as Operation,
} from '../observability/metrics';
import type {
  OneTimeCounters,
  RecordChanges,
  RecordRead,
  RefreshLocks,
  TokenRecords,
  TokenStore,
} from './token-store';

/**
 * Shared attribute objects, one per operation and outcome (the ones seeded at zero in metrics.ts):
 * recording allocates nothing.
 */
const OK = Object.fromEntries(STORE_OPERATIONS.map((op) => [op, LABELS.storeCall.get(op, 'ok')]));
const FAILED = Object.fromEntries(
  STORE_OPERATIONS.map((op) => [op, LABELS.storeCall.get(op, 'error')]),
);
const ERROR_COUNT = Object.fromEntries(
  STORE_OPERATIONS.map((op) => [op, LABELS.storeError.get(op)]),
);
/** performance.now() is in milliseconds; durations are recorded in seconds. */
const MS_PER_SECOND = 1000;

export class InstrumentedTokenStore implements TokenStore {
  readonly records: TokenRecords;
  readonly locks: RefreshLocks;
  readonly counters: OneTimeCounters;
  readonly changes: RecordChanges | undefined;

  constructor(
    readonly inner: TokenStore,
    private readonly metrics: PlatformMetrics,
  ) {
    const { records, locks, counters } = inner;
    // The operation labels are the metric's (docs/metrics.md): kept as they were named before the
    // store was split into parts, so dashboards keep working.
    this.records = {
      get: (sessionKey) => this.#timedGet(sessionKey),
      put: (sessionKey, record, options) =>
        this.#timed('put', () => records.put(sessionKey, record, options)),
      delete: (sessionKey, options) =>
        this.#timed('delete', () => records.delete(sessionKey, options)),
      renew: (sessionKey, openId, ttlMs) =>
        this.#timed('touch', () => records.renew(sessionKey, openId, ttlMs)),
      loginsOf: (openId) => this.#timed('sessionsOf', () => records.loginsOf(openId)),
      deletePlayer: (openId) => this.#timed('deletePlayer', () => records.deletePlayer(openId)),
      loginGeneration: () => this.#timed('loginGeneration', () => records.loginGeneration()),
    };
    this.locks = {
      acquire: (sessionKey, ttlMs) =>
        this.#timed('acquireLock', () => locks.acquire(sessionKey, ttlMs)),
      extend: (sessionKey, owner, ttlMs) =>
        this.#timed('extendLock', () => locks.extend(sessionKey, owner, ttlMs)),
      release: (sessionKey, owner) =>
        this.#timed('releaseLock', () => locks.release(sessionKey, owner)),
      hold: (sessionKey, version, ttlMs) =>
        this.#timed('holdBackRefreshes', () => locks.hold(sessionKey, version, ttlMs)),
      heldMs: (sessionKey, version) =>
        this.#timed('refreshHeldBackMs', () => locks.heldMs(sessionKey, version)),
    };
    this.counters = {
      claimOnce: (key, ttlMs) => this.#timed('claimOnce', () => counters.claimOnce(key, ttlMs)),
      countInWindow: (key, increment, windowMs) =>
        this.#timed('countInWindow', () => counters.countInWindow(key, increment, windowMs)),
    };
    this.changes = inner.changes;
  }

  #failed(operation: Operation, startedAt: number): void {
    this.metrics.storeDuration.record(
      (performance.now() - startedAt) / MS_PER_SECOND,
      FAILED[operation],
    );
    this.metrics.storeErrors.add(1, ERROR_COUNT[operation]);
  }

  async #timed<T>(operation: Operation, call: () => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    try {
      const result = await call();
      this.metrics.storeDuration.record(
        (performance.now() - startedAt) / MS_PER_SECOND,
        OK[operation],
      );
      return result;
    } catch (error) {
      this.#failed(operation, startedAt);
      throw error;
    }
  }

  // The read is on every request's path: written out, without the closure `#timed` takes.
  async #timedGet(sessionKey: string): Promise<RecordRead> {
    const startedAt = performance.now();
    try {
      const read = await this.inner.records.get(sessionKey);
      this.metrics.storeDuration.record((performance.now() - startedAt) / MS_PER_SECOND, OK.get);
      return read;
    } catch (error) {
      this.#failed('get', startedAt);
      throw error;
    }
  }
}
