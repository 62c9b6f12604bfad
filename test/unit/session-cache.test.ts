// SessionCache, the logic under RedisSessionStore's memory: serving only while on, a read in
// flight when its key changed (or the cache was emptied or switched) not kept, expiry from the
// key's PTTL, the size bound (least recently used out).
import { SessionCache } from '../../lib/session-store/session-cache';

const NOW = 1_000_000;

function cacheOn(maxEntries = 10): SessionCache {
  const cache = new SessionCache(maxEntries);
  cache.setActive(true);
  return cache;
}

function read(cache: SessionCache, key: string, json = '{"a":1}', pttlMs = 60_000): void {
  cache.endRead(cache.beginRead(key), json, pttlMs, NOW);
}

test('off (as it starts): a read is not kept', () => {
  const cache = new SessionCache(10);
  read(cache, 'sess:a');
  expect(cache.lookup('sess:a', NOW)).toBeUndefined();
});

test('on: a read is served until the key expires, not after', () => {
  const cache = cacheOn();
  read(cache, 'sess:a', '{"a":1}', 5000);
  expect(cache.lookup('sess:a', NOW + 4999)?.json).toBe('{"a":1}');
  expect(cache.lookup('sess:a', NOW + 5000)).toBeUndefined();
});

test('no key, or a key without TTL: nothing kept', () => {
  const cache = cacheOn();
  cache.endRead(cache.beginRead('sess:gone'), null, -2, NOW);
  cache.endRead(cache.beginRead('sess:forever'), '{}', -1, NOW);
  expect(cache.size).toBe(0);
});

test('a read in flight when its key is reported changed is not kept', () => {
  const cache = cacheOn();
  const ticket = cache.beginRead('sess:a');
  cache.reported('sess:a');
  cache.endRead(ticket, '{"old":true}', 60_000, NOW);
  expect(cache.lookup('sess:a', NOW)).toBeUndefined();
  // The next read, started after the change, is kept.
  read(cache, 'sess:a', '{"new":true}');
  expect(cache.lookup('sess:a', NOW)?.json).toBe('{"new":true}');
});

test('a change of another key does not stop a read from being kept', () => {
  const cache = cacheOn();
  const ticket = cache.beginRead('sess:a');
  cache.reported('sess:b');
  cache.endRead(ticket, '{}', 60_000, NOW);
  expect(cache.lookup('sess:a', NOW)).toBeDefined();
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
    cache.endRead(ticket, '{}', 60_000, NOW);
    expect(cache.lookup('sess:a', NOW)).toBeUndefined();
    expect(cache.lookup('sess:b', NOW)).toBeUndefined();
  }
  const cache = cacheOn();
  read(cache, 'sess:a');
  cache.setActive(false);
  expect(cache.active).toBe(false);
  expect(cache.size).toBe(0);
});

test('bounded: the least recently used goes first', () => {
  const cache = cacheOn(2);
  read(cache, 'sess:a');
  read(cache, 'sess:b');
  cache.lookup('sess:a', NOW); // a is now the most recent
  read(cache, 'sess:c');
  expect(cache.size).toBe(2);
  expect(cache.lookup('sess:b', NOW)).toBeUndefined();
  expect(cache.lookup('sess:a', NOW)).toBeDefined();
  expect(cache.lookup('sess:c', NOW)).toBeDefined();
});

test('extend moves an entry’s expiry (this process renewed the key)', () => {
  const cache = cacheOn();
  read(cache, 'sess:a', '{}', 1000);
  cache.extend('sess:a', NOW + 10_000);
  expect(cache.lookup('sess:a', NOW + 5000)).toBeDefined();
});
