// TrackedCache, the pure logic under RedisTokenStore's record cache (and RedisSessionStore's):
// serving only while on and within its lease, the in-flight read race, the size bound, expiry,
// emptying, and the waiters; and the engine's reads of values held in memory.
import { TrackedCache } from '../../lib/caching/tracked-cache';
import { deriveEngine } from '../../lib/core/derived-engine';
import { recordValue } from '../../lib/core/record-value';
import { MemoryTokenStore } from '../../lib/core/memory-store';
import type { RecordRead } from '../../lib/core/store-engine';
import type { TokenRecord } from '../../lib/core/token-record';

type RecordCache = TrackedCache<RecordRead>;

const NOW = 1_000_000;

const record = (version: number): TokenRecord => ({
  accessToken: `access-${version}`,
  refreshToken: `refresh-${version}`,
  accessExpiresAt: NOW + 3_600_000,
  refreshExpiresAt: NOW + 86_400_000,
  openId: 'player-ada',
  scope: ['user_info'],
  version,
  obtainedAt: NOW,
});

const found = (value: TokenRecord): RecordRead => ({ status: 'found', record: value });

/**
 * Reads `sessionId` through the cache as the store does, answering `value` with `ttlMs`;
 * `changedMeanwhile`: a key reported changed while the read is in flight.
 */
function readThrough(
  cache: RecordCache,
  sessionId: string,
  value: TokenRecord,
  ttlMs = -1,
  changedMeanwhile?: string,
): void {
  const ticket = cache.beginRead(`key-${sessionId}`);
  if (changedMeanwhile !== undefined) cache.changed(changedMeanwhile);
  cache.endRead(ticket, sessionId, found(value), ttlMs >= 0 ? NOW + ttlMs : Infinity);
}

const activeCache = (size = 10): RecordCache => {
  const cache = new TrackedCache<RecordRead>(size);
  cache.setActive(true);
  return cache;
};

/** The record the cache holds for `sessionId`, or `undefined` (nothing held, or an absence). */
function lookup(cache: RecordCache, sessionId: string): TokenRecord | undefined {
  const read = cache.entryOf(sessionId)?.value;
  return read?.status === 'found' ? read.record : undefined;
}

// A lookup reads Date.now() for the entry's expiry: fake timers drive it.
beforeEach(() => jest.useFakeTimers({ now: NOW }));
afterEach(() => jest.useRealTimers());

test('serves nothing while off, and what was read once it is on', () => {
  const cache = new TrackedCache<RecordRead>(10);
  readThrough(cache, 's1', record(1));
  expect(lookup(cache, 's1')).toBeUndefined();
  cache.setActive(true);
  readThrough(cache, 's1', record(1));
  expect(lookup(cache, 's1')?.version).toBe(1);
});

test('a change of the key drops the record', () => {
  const cache = activeCache();
  readThrough(cache, 's1', record(1));
  readThrough(cache, 's2', record(1));
  cache.changed('key-s1');
  expect(lookup(cache, 's1')).toBeUndefined();
  expect(lookup(cache, 's2')?.version).toBe(1);
});

test('a read in flight when its key changes is not cached', () => {
  const cache = activeCache();
  readThrough(cache, 's1', record(1), -1, 'key-s1');
  expect(lookup(cache, 's1')).toBeUndefined();
});

test('a read started after the change is cached, one overlapping it is not', () => {
  const cache = activeCache();
  const early = cache.beginRead('key-s1');
  cache.changed('key-s1');
  const late = cache.beginRead('key-s1');
  cache.endRead(late, 's1', found(record(2)), Infinity);
  cache.endRead(early, 's1', found(record(1)), Infinity);
  expect(lookup(cache, 's1')?.version).toBe(2);
});

test('a change of another key does not stop a read from being cached', () => {
  const cache = activeCache();
  readThrough(cache, 's1', record(1), -1, 'key-s2');
  expect(lookup(cache, 's1')?.version).toBe(1);
});

test.each([
  ['emptied (FLUSHDB)', (cache: RecordCache) => cache.invalidateAll()],
  [
    'switched off and on again (a reconnect)',
    (cache: RecordCache) => {
      cache.setActive(false);
      cache.setActive(true);
    },
  ],
])('a read in flight when the cache is %s is not cached, and nothing stays', (_name, event) => {
  const cache = activeCache();
  readThrough(cache, 's2', record(1));
  const ticket = cache.beginRead('key-s1');
  event(cache);
  cache.endRead(ticket, 's1', found(record(1)), Infinity);
  expect(lookup(cache, 's1')).toBeUndefined();
  expect(lookup(cache, 's2')).toBeUndefined();
  expect(cache.size).toBe(0);
});

test('a read that started while the cache was off is not cached after it comes on', () => {
  const cache = new TrackedCache<RecordRead>(10);
  const ticket = cache.beginRead('key-s1');
  cache.setActive(true);
  cache.endRead(ticket, 's1', found(record(1)), Infinity);
  expect(lookup(cache, 's1')).toBeUndefined();
});

test('an abandoned read caches nothing and leaves nothing behind', () => {
  const cache = activeCache();
  cache.abandonRead(cache.beginRead('key-s1'));
  readThrough(cache, 's1', record(1));
  expect(lookup(cache, 's1')?.version).toBe(1);
});

test('serves nothing past the end of its lease, and again once renewed, entries kept', () => {
  const cache = new TrackedCache<RecordRead>(10);
  cache.listener.renewed!(NOW + 100);
  cache.listener.liveChanged(true);
  readThrough(cache, 's1', record(1));
  expect(cache.entryOf('s1', NOW + 99)).toBeDefined();
  // The lease's end passed before its timer told the cache (a stalled event loop): no hit.
  expect(cache.entryOf('s1', NOW + 100)).toBeUndefined();
  cache.listener.renewed!(NOW + 300);
  expect(cache.entryOf('s1', NOW + 200)).toBeDefined();
  // A renewal that comes after the end (the timer did not run in time) starts from empty.
  jest.setSystemTime(NOW + 300);
  cache.listener.renewed!(NOW + 600);
  expect(cache.entryOf('s1', NOW + 400)).toBeUndefined();
  readThrough(cache, 's1', record(1));
  cache.listener.allChanged();
  cache.listener.liveChanged(false);
  cache.listener.renewed!(NOW + 800);
  cache.listener.liveChanged(true);
  expect(cache.entryOf('s1', NOW + 400)).toBeUndefined(); // off emptied it
});

describe('the engine over a store that serves values from memory', () => {
  /** A store whose `cachedGet` hands out one frozen value; counts the engine's decodings by reads. */
  function engineOver(value: string) {
    const stored = Object.freeze({ value, version: 1, expiresAt: NOW + 60_000 });
    const store = new MemoryTokenStore();
    const engine = deriveEngine(store, undefined, { cachedGet: () => stored });
    return engine.records;
  }

  test('a record held in memory is decoded once, frozen, scope included', () => {
    const records = engineOver(recordValue(record(1), 't:s1'));
    const first = records.cachedRead!('s1');
    const second = records.cachedRead!('s1');
    expect(second).toBe(first);
    const held = second?.status === 'found' ? second.record : undefined;
    expect(held).toEqual(record(1));
    expect(Object.isFrozen(held)).toBe(true);
    expect(() => held!.scope.push('admin')).toThrow(TypeError);
  });

  test('a value it cannot read answers unreadable, never absent', () => {
    expect(engineOver('not a record').cachedRead!('s1')).toEqual({
      status: 'unreadable',
      reason: 'parse',
    });
  });
});

test('a read in flight may be shared until a change of its key is reported', () => {
  const cache = activeCache();
  const ticket = cache.beginRead('key-s1');
  expect(cache.unchangedSince(ticket)).toBe(true);
  cache.changed('key-s2');
  expect(cache.unchangedSince(ticket)).toBe(true);
  cache.changed('key-s1');
  expect(cache.unchangedSince(ticket)).toBe(false);
  const after = cache.beginRead('key-s1');
  expect(cache.unchangedSince(after)).toBe(true);
  cache.invalidateAll();
  expect(cache.unchangedSince(after)).toBe(false);
  cache.endRead(after, 's1', found(record(1)), Infinity);
  expect(cache.unchangedSince(after)).toBe(false); // finished: nothing left to share
});

test('a record goes when its Redis TTL runs out', () => {
  const cache = activeCache();
  readThrough(cache, 's1', record(1), 500);
  jest.advanceTimersByTime(480);
  expect(lookup(cache, 's1')?.version).toBe(1);
  jest.advanceTimersByTime(40);
  expect(lookup(cache, 's1')).toBeUndefined();
});

test('holds at most its size, dropping one not read since the last eviction first', () => {
  const cache = activeCache(2);
  readThrough(cache, 's1', record(1));
  readThrough(cache, 's2', record(1));
  expect(lookup(cache, 's1')).toBeDefined(); // s2 is now the least recently used
  readThrough(cache, 's3', record(1));
  expect(cache.size).toBe(2);
  expect(lookup(cache, 's2')).toBeUndefined();
  expect(lookup(cache, 's1')).toBeDefined();
  expect(lookup(cache, 's3')).toBeDefined();
  // The dropped entry's key is forgotten too: its change later removes nothing else.
  cache.changed('key-s2');
  expect(cache.size).toBe(2);
});

test('when every entry was read, each gets a second chance and the oldest goes', () => {
  const cache = activeCache(3);
  for (const id of ['s1', 's2', 's3']) readThrough(cache, id, record(1));
  for (const id of ['s1', 's2', 's3']) lookup(cache, id);
  readThrough(cache, 's4', record(1));
  expect(cache.size).toBe(3);
  expect(lookup(cache, 's1')).toBeUndefined();
  // s2 and s3 lost their mark in that pass; s3 is read again, so s2 goes next.
  lookup(cache, 's3');
  readThrough(cache, 's5', record(1));
  expect(lookup(cache, 's2')).toBeUndefined();
  expect(lookup(cache, 's3')).toBeDefined();
  expect(lookup(cache, 's4')).toBeDefined();
  expect(lookup(cache, 's5')).toBeDefined();
});

test('runs no timer, on or off (expiry is compared with the time of each lookup)', () => {
  const cache = activeCache();
  readThrough(cache, 's1', record(1), 500);
  expect(jest.getTimerCount()).toBe(0);
  cache.setActive(false);
  expect(jest.getTimerCount()).toBe(0);
});

test('any session id is its own key, names of Object.prototype and numbers included', () => {
  // Lookups go through a null-prototype dictionary: no inherited name may answer, none may clash.
  const ids = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '0', '12345', ''];
  const cache = activeCache(ids.length + 1);
  expect(ids.map((id) => lookup(cache, id))).toEqual(ids.map(() => undefined));
  ids.forEach((id, index) => readThrough(cache, id, record(index + 1)));
  expect(ids.map((id) => lookup(cache, id)?.version)).toEqual(ids.map((_, index) => index + 1));
  cache.changed('key-__proto__');
  cache.changed('key-12345');
  expect(ids.map((id) => lookup(cache, id)?.version)).toEqual([
    undefined,
    2,
    3,
    4,
    5,
    undefined,
    7,
  ]);
  expect(cache.size).toBe(ids.length - 2);
});

test("a lookup given the caller's time judges expiry by it", () => {
  const cache = activeCache();
  readThrough(cache, 's1', record(1), 500);
  expect(cache.entryOf('s1', NOW + 499)?.value).toMatchObject({ record: { version: 1 } });
  expect(cache.entryOf('s1', NOW + 500)).toBeUndefined();
  // Dropped, not only hidden: the clock going back does not bring it back.
  expect(cache.entryOf('s1', NOW)).toBeUndefined();
});

describe('watch', () => {
  test('tells its watcher of a change of any of its keys, each time, until unsubscribed', () => {
    const cache = activeCache();
    let told = 0;
    const unwatch = cache.watch(['key-s1', 'lock-s1'], () => (told += 1));
    cache.changed('key-s2');
    expect(told).toBe(0);
    cache.changed('lock-s1');
    cache.changed('key-s1');
    expect(told).toBe(2);
    unwatch();
    cache.changed('key-s1');
    expect(told).toBe(2);
  });

  test('tells every watcher once when the cache is emptied or switched off', () => {
    const cache = activeCache();
    let told = 0;
    cache.watch(['key-s1', 'lock-s1'], () => (told += 1));
    cache.watch(['key-s2'], () => (told += 1));
    cache.invalidateAll();
    expect(told).toBe(2);
    cache.setActive(false);
    expect(told).toBe(4);
  });
});
