// Wraps a StoreEngine so every call to the backend is timed and emitted as a `storeCall` event
// (metrics subscribe to it). Change notices and reads from memory (`cachedRead`) are no backend
// call: passed through untimed, so the duration histogram shows the backend's latency.
import type { EventEmitter } from 'node:events';
import type { PlatformLoginEvents, StoreOperation as Operation } from '../observability/events';
import type { StoreEngine } from './store-engine';

export function instrumentedStore(
  inner: StoreEngine,
  events: EventEmitter<PlatformLoginEvents>,
): StoreEngine {
  const timed = async <T>(operation: Operation, call: () => Promise<T>): Promise<T> => {
    const startedAt = performance.now();
    let outcome: 'ok' | 'error' = 'error';
    try {
      const result = await call();
      outcome = 'ok';
      return result;
    } finally {
      // A fresh payload per call, like every event's: a reused one would change under listeners.
      events.emit('storeCall', { operation, outcome, durationMs: performance.now() - startedAt });
    }
  };
  const { records, locks, counters, entries, logins } = inner;
  const cachedRead = records.cachedRead?.bind(records);
  const timedGet = (sessionKey: string) => timed('get', () => records.get(sessionKey));
  // The operation labels are the metric's (docs/metrics.md), which dashboards query by name.
  return {
    records: {
      get:
        cachedRead === undefined
          ? timedGet
          : (sessionKey) => {
              const held = cachedRead(sessionKey);
              return held === undefined ? timedGet(sessionKey) : Promise.resolve(held);
            },
      ...(cachedRead && { cachedRead }),
      put: (sessionKey, record, options) =>
        timed('put', () => records.put(sessionKey, record, options)),
      delete: (sessionKey, options) => timed('delete', () => records.delete(sessionKey, options)),
      renew: (sessionKey, openId, ttlMs) =>
        timed('touch', () => records.renew(sessionKey, openId, ttlMs)),
      loginsOf: (openId) => timed('sessionsOf', () => records.loginsOf(openId)),
      deletePlayer: (openId) => timed('deletePlayer', () => records.deletePlayer(openId)),
      loginGeneration: () => timed('loginGeneration', () => records.loginGeneration()),
    },
    locks: {
      acquire: (sessionKey, ttlMs) => timed('acquireLock', () => locks.acquire(sessionKey, ttlMs)),
      extend: (sessionKey, owner, ttlMs) =>
        timed('extendLock', () => locks.extend(sessionKey, owner, ttlMs)),
      release: (sessionKey, owner) => timed('releaseLock', () => locks.release(sessionKey, owner)),
      hold: (sessionKey, version, ttlMs) =>
        timed('holdBackRefreshes', () => locks.hold(sessionKey, version, ttlMs)),
      heldMs: (sessionKey, version) =>
        timed('refreshHeldBackMs', () => locks.heldMs(sessionKey, version)),
    },
    counters: {
      claimOnce: (key, ttlMs) => timed('claimOnce', () => counters.claimOnce(key, ttlMs)),
      countInWindow: (key, increment, windowMs) =>
        timed('countInWindow', () => counters.countInWindow(key, increment, windowMs)),
    },
    changes: inner.changes,
    // Passed through: a replica's acknowledgement is no call the store's latency should count.
    durability: inner.durability,
    entries: entries && { begin: (entry) => timed('beginEntry', () => entries.begin(entry)) },
    // Timed as the record's write it makes ('put'), the session and the give-back riding along.
    logins: logins && {
      put: (write) => timed('put', () => logins.put(write)),
      sharesClient: (client) => logins.sharesClient(client),
    },
  };
}
