// Wraps a StoreEngine so every call to the backend is timed and emitted as a `storeCall` event
// (metrics subscribe to it in observability/event-logging.ts, like every other observation). The
// wrapped store is unchanged. Change notices are passed through untimed: a watch is no backend call;
// so are reads the store answers from memory (`cachedRead`), which would otherwise fill the
// duration histogram with sub-microsecond hits and hide the backend's latency.
// It lives beside the contract it wraps (token-store.ts): observability/ sits below core/ (core
// emits into it), so a wrapper over the contract there would import upwards.
import type { EventEmitter } from 'node:events';
import type { PlatformLoginEvents, StoreOperation as Operation } from '../observability/events';
import type {
  Durability,
  EntryChecks,
  LoginWrites,
  OneTimeCounters,
  RecordChanges,
  RefreshLocks,
  TokenRecords,
  StoreEngine,
} from './store-engine';

export class InstrumentedTokenStore implements StoreEngine {
  readonly records: TokenRecords;
  readonly locks: RefreshLocks;
  readonly counters: OneTimeCounters;
  readonly changes: RecordChanges | undefined;
  readonly entries: EntryChecks | undefined;
  /** Passed through: a replica's acknowledgement is no call the store's latency should count. */
  readonly durability: Durability | undefined;
  readonly logins: LoginWrites | undefined;

  constructor(
    inner: StoreEngine,
    private readonly events: EventEmitter<PlatformLoginEvents>,
  ) {
    const { records, locks, counters, entries, logins } = inner;
    const cachedRead = records.cachedRead?.bind(records);
    const timedGet = (sessionKey: string) => this.#timed('get', () => records.get(sessionKey));
    // The operation labels are the metric's (docs/metrics.md), which dashboards query by name.
    this.records = {
      get:
        cachedRead === undefined
          ? timedGet
          : (sessionKey) => {
              const held = cachedRead(sessionKey);
              return held === undefined ? timedGet(sessionKey) : Promise.resolve(held);
            },
      ...(cachedRead && { cachedRead }),
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
    this.durability = inner.durability;
    this.entries = entries && {
      begin: (entry) => this.#timed('beginEntry', () => entries.begin(entry)),
    };
    // Timed as the record's write it makes ('put'), the session and the give-back riding along.
    this.logins = logins && {
      put: (write) => this.#timed('put', () => logins.put(write)),
      sharesClient: (client) => logins.sharesClient(client),
    };
  }

  async #timed<T>(operation: Operation, call: () => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    let outcome: 'ok' | 'error' = 'error';
    try {
      const result = await call();
      outcome = 'ok';
      return result;
    } finally {
      // A fresh payload per call, like every event's: a reused one would change under listeners.
      this.events.emit('storeCall', {
        operation,
        outcome,
        durationMs: performance.now() - startedAt,
      });
    }
  }
}
