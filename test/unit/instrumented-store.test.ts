// instrumentedStore(): each call to the store is one `storeCall` event, named as the store
// metrics name it, with how it ended; the call's result or error passes through unchanged. A read
// the store answers from memory (`cachedRead`) is no store call.
import { engineOf } from '../../lib/core/derived-engine';
import { EventEmitter } from 'node:events';
import { instrumentedStore } from '../../lib/core/instrumented-store';
import type { PlatformLoginEvents } from '../../lib/observability/events';
import { MemoryTokenStore } from '../../lib/core/memory-store';
import { newSessionKey, sampleRecord } from 'express-platform-login/testing';

type StoreCall = PlatformLoginEvents['storeCall'][0];

function instrumented(inner = engineOf(new MemoryTokenStore())) {
  const events = new EventEmitter<PlatformLoginEvents>();
  const calls: StoreCall[] = [];
  events.on('storeCall', (call) => calls.push(call));
  return { inner, store: instrumentedStore(inner, events), calls };
}

test('a call that answers is one storeCall, ok, under the metric operation name', async () => {
  const { store, calls } = instrumented();
  const key = newSessionKey();
  await store.records.put(key, sampleRecord(1), { expectedVersion: null, ttlMs: 60_000 });
  const read = await store.records.get(key);
  await store.records.renew(key, sampleRecord(1).openId, 60_000);
  expect(read.status).toBe('found');
  expect(calls.map(({ operation, outcome }) => [operation, outcome])).toEqual([
    ['put', 'ok'],
    ['get', 'ok'],
    ['touch', 'ok'],
  ]);
  for (const call of calls) expect(call.durationMs).toBeGreaterThanOrEqual(0);
});

test('a call that throws is one storeCall, error, and the error reaches the caller', async () => {
  const { inner, store, calls } = instrumented();
  const failure = new Error('down');
  jest.spyOn(inner.records, 'get').mockRejectedValueOnce(failure);
  jest.spyOn(inner.locks, 'acquire').mockRejectedValueOnce(failure);
  await expect(store.records.get(newSessionKey())).rejects.toBe(failure);
  await expect(store.locks.acquire(newSessionKey(), 1000)).rejects.toBe(failure);
  expect(calls.map(({ operation, outcome }) => [operation, outcome])).toEqual([
    ['get', 'error'],
    ['acquireLock', 'error'],
  ]);
});

test('a read the store answers from memory is that answer, and no storeCall; one it does not is timed', async () => {
  const memory = new MemoryTokenStore();
  const held = newSessionKey();
  const notHeld = newSessionKey();
  await engineOf(memory).records.put(notHeld, sampleRecord(2), {
    expectedVersion: null,
    ttlMs: 60_000,
  });
  const fromMemory = { status: 'found', record: sampleRecord(1) } as const;
  engineOf(memory).records.cachedRead = (sessionKey) =>
    sessionKey === held ? fromMemory : undefined;
  const { store, calls } = instrumented(engineOf(memory));

  expect(store.records.cachedRead?.(held)).toBe(fromMemory);
  expect(store.records.cachedRead?.(notHeld)).toBeUndefined();
  expect(await store.records.get(held)).toBe(fromMemory);
  expect(await store.records.get(notHeld)).toMatchObject({ status: 'found' });
  expect(calls.map(({ operation }) => operation)).toEqual(['get']);
});
