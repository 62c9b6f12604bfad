// TrackedCache as RedisSessionStore uses it (the stored JSON by session key): serving only while
// on, a read in flight when its key changed (or the cache was emptied or switched) not kept,
// expiry from the key's PTTL, the size bound (one not read recently out), a renewal's new expiry.
import { TrackedCache } from '../../lib/caching/tracked-cache';

const NOW = 1_000_000;
type SessionCache = TrackedCache<string>;

function cacheOn(maxEntries = 10): SessionCache {
  const cache = new TrackedCache<string>(maxEntries);
  cache.setActive(true);
  return cache;
}

/** Reads `key` through the cache; `changedMeanwhile`: a key reported changed while it is in flight. */
function read(
  cache: SessionCache,
  key: string,
  json = '{"a":1}',
  pttlMs = 60_000,
  changedMeanwhile?: string,
): void {
  const ticket = cache.beginRead(key);
  if (changedMeanwhile !== undefined) cache.changed(changedMeanwhile);
  cache.endRead(ticket, key, json, NOW + pttlMs);
}

test('off (as it starts): a read is not kept', () => {
  const cache = new TrackedCache<string>(10);
  read(cache, 'sess:a');
  expect(cache.entryOf('sess:a', NOW)).toBeUndefined();
});

test('on: a read is served until the key expires, not after', () => {
  const cache = cacheOn();
  read(cache, 'sess:a', '{"a":1}', 5000);
  expect(cache.entryOf('sess:a', NOW + 4999)?.value).toBe('{"a":1}');
  expect(cache.entryOf('sess:a', NOW + 5000)).toBeUndefined();
});

test('a read in flight when its key is reported changed is not kept', () => {
  const cache = cacheOn();
  read(cache, 'sess:a', '{"old":true}', 60_000, 'sess:a');
  expect(cache.entryOf('sess:a', NOW)).toBeUndefined();
  // The next read, started after the change, is kept.
  read(cache, 'sess:a', '{"new":true}');
  expect(cache.entryOf('sess:a', NOW)?.value).toBe('{"new":true}');
});

test('a change of another key does not stop a read from being kept', () => {
  const cache = cacheOn();
  read(cache, 'sess:a', '{}', 60_000, 'sess:b');
  expect(cache.entryOf('sess:a', NOW)).toBeDefined();
});

test('FLUSHDB (invalidateAll) and switching off or on drop everything, reads in flight included', () => {
  for (const change of [
    (c: SessionCache) => c.invalidateAll(),
    (c: SessionCache) => c.setActive(true),
  ]) {
    const cache = cacheOn();
    read(cache, 'sess:a');
    const ticket = cache.beginRead('sess:b');
    change(cache);
    cache.endRead(ticket, 'sess:b', '{}', NOW + 60_000);
    expect(cache.entryOf('sess:a', NOW)).toBeUndefined();
    expect(cache.entryOf('sess:b', NOW)).toBeUndefined();
  }
  const cache = cacheOn();
  read(cache, 'sess:a');
  cache.setActive(false);
  expect(cache.active).toBe(false);
  expect(cache.size).toBe(0);
});

test('bounded: one not read since the last eviction goes first', () => {
  const cache = cacheOn(2);
  read(cache, 'sess:a');
  read(cache, 'sess:b');
  cache.entryOf('sess:a', NOW); // a is now the most recent
  read(cache, 'sess:c');
  expect(cache.size).toBe(2);
  expect(cache.entryOf('sess:b', NOW)).toBeUndefined();
  expect(cache.entryOf('sess:a', NOW)).toBeDefined();
  expect(cache.entryOf('sess:c', NOW)).toBeDefined();
});

test('a renewal moves an entry’s expiry (this process renewed the key)', () => {
  const cache = cacheOn();
  read(cache, 'sess:a', '{}', 1000);
  cache.entryOf('sess:a', NOW)!.expiresAt = NOW + 10_000;
  expect(cache.entryOf('sess:a', NOW + 5000)).toBeDefined();
});
