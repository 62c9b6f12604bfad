// Wraps a TokenStore so every call to the backend is timed (in seconds) and every failure counted
// in the metrics. The wrapped store is unchanged. A record answered from process memory
// (`getCached`) is passed through untimed: there is no backend call to measure, and the hot path
// pays nothing.
import {
  LABELS,
  STORE_OPERATIONS,
  type PlatformMetrics,
  type StoreOperation as Operation,
} from '../observability/metrics';
import type { DeleteOptions, PutOptions, TokenStore, WindowCount } from '../core/token-store';
import type { TokenRecord } from '../core/token-record';

const unsupported = (method: string): TypeError =>
  new TypeError(
    `This token store has no ${method}(): per-player operations need MemoryTokenStore, RedisTokenStore or a store that implements it.`,
  );

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
  // The recommended methods exist here only when the wrapped store has them: callers test for them.
  readonly extendLock?: TokenStore['extendLock'];
  readonly holdBackRefreshes?: TokenStore['holdBackRefreshes'];
  readonly refreshHeldBackMs?: TokenStore['refreshHeldBackMs'];
  readonly touch?: TokenStore['touch'];
  /** Present when the inner store has it; a wait is not a store operation to time. */
  readonly waitForChange?: (sessionId: string, timeoutMs: number) => Promise<void>;

  constructor(
    readonly inner: TokenStore,
    private readonly metrics: PlatformMetrics,
  ) {
    const { extendLock, holdBackRefreshes, refreshHeldBackMs, touch } = inner;
    if (extendLock !== undefined) {
      this.extendLock = (sessionId, owner, ttlMs) =>
        this.timed('extendLock', () => extendLock.call(inner, sessionId, owner, ttlMs));
    }
    if (holdBackRefreshes !== undefined) {
      this.holdBackRefreshes = (sessionId, version, ttlMs) =>
        this.timed('holdBackRefreshes', () =>
          holdBackRefreshes.call(inner, sessionId, version, ttlMs),
        );
    }
    if (refreshHeldBackMs !== undefined) {
      this.refreshHeldBackMs = (sessionId, version) =>
        this.timed('refreshHeldBackMs', () => refreshHeldBackMs.call(inner, sessionId, version));
    }
    if (touch !== undefined) {
      this.touch = (sessionId, openId, ttlMs) =>
        this.timed('touch', () => touch.call(inner, sessionId, openId, ttlMs));
    }
    // Only when the inner store has it, so that callers can test for it.
    if (typeof inner.getCached === 'function') {
      const getCached = inner.getCached.bind(inner);
      this.getCached = getCached;
    }
    if (inner.waitForChange !== undefined) {
      this.waitForChange = (sessionId, timeoutMs) => inner.waitForChange!(sessionId, timeoutMs);
    }
    const count = inner.countInWindow;
    if (count !== undefined) {
      this.countInWindow = (key, increment, windowMs) =>
        this.timed('countInWindow', () => count.call(inner, key, increment, windowMs));
    }
  }

  /** The inner store's cached read, untimed (see the file's header); absent when it has none. */
  getCached?: (sessionId: string, now?: number) => TokenRecord | undefined;

  private async timed<T>(operation: Operation, call: () => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    try {
      const result = await call();
      this.metrics.storeDuration.record(
        (performance.now() - startedAt) / MS_PER_SECOND,
        OK[operation],
      );
      return result;
    } catch (error) {
      this.metrics.storeDuration.record(
        (performance.now() - startedAt) / MS_PER_SECOND,
        FAILED[operation],
      );
      this.metrics.storeErrors.add(1, ERROR_COUNT[operation]);
      throw error;
    }
  }

  get(sessionId: string): Promise<TokenRecord | undefined> {
    return this.timed('get', () => this.inner.get(sessionId));
  }
  put(sessionId: string, record: TokenRecord, options: PutOptions): Promise<boolean> {
    return this.timed('put', () => this.inner.put(sessionId, record, options));
  }
  delete(sessionId: string, options?: DeleteOptions): Promise<boolean> {
    return this.timed('delete', () => this.inner.delete(sessionId, options));
  }
  acquireLock(sessionId: string, ttlMs: number): Promise<string | undefined> {
    return this.timed('acquireLock', () => this.inner.acquireLock(sessionId, ttlMs));
  }
  releaseLock(sessionId: string, owner: string): Promise<boolean> {
    return this.timed('releaseLock', () => this.inner.releaseLock(sessionId, owner));
  }
  claimOnce(key: string, ttlMs: number): Promise<boolean> {
    return this.timed('claimOnce', () => this.inner.claimOnce(key, ttlMs));
  }
  sessionsOf(openId: string): Promise<number> {
    const inner = this.inner;
    if (inner.sessionsOf === undefined) return Promise.reject(unsupported('sessionsOf'));
    return this.timed('sessionsOf', () => inner.sessionsOf!(openId));
  }
  /** Present only when the wrapped store has it (callers test for it). */
  readonly countInWindow?: (
    key: string,
    increment: 0 | 1,
    windowMs: number,
  ) => Promise<WindowCount>;
  deletePlayer(openId: string): Promise<number> {
    const inner = this.inner;
    if (inner.deletePlayer === undefined) return Promise.reject(unsupported('deletePlayer'));
    return this.timed('deletePlayer', () => inner.deletePlayer!(openId));
  }
}
