// The one-way forms of identifiers: stable (a session's record key must not change between its
// requests) and distinct.
import { createHash } from 'node:crypto';
import { hashOpenId, hashSessionId } from '../../lib/core/hash';

/** The documented key form, computed independently: SHA-256, base64url, first 22 characters. */
const shortHash = (value: string): string =>
  createHash('sha256').update(value).digest('base64url').slice(0, 22);

test('a session id hashes to the documented key form, the same on every request', () => {
  const first = hashSessionId('session-a');
  expect(first).toBe(shortHash('session:session-a'));
  expect(hashSessionId('session-a')).toBe(first);
});

test('different session ids give different keys, and no key contains the id', () => {
  const keys = new Set(Array.from({ length: 1000 }, (_, index) => hashSessionId(`s-${index}`)));
  expect(keys.size).toBe(1000);
  expect(hashSessionId('visible-session-id')).not.toContain('visible');
  expect(hashSessionId('visible-session-id')).toMatch(/^[A-Za-z0-9_-]{22}$/);
});

test('open_ids with lone surrogates get keys of their own; well-formed ones keep the keys Redis holds', () => {
  // UTF-8 turns every lone surrogate into U+FFFD: these three once shared one player index.
  const keys = ['sur\ud800', 'sur\udbff', 'sur\ufffd', '\udc00sur'].map(hashOpenId);
  expect(new Set(keys).size).toBe(4);
  for (const openId of ['player-ada', 'игрок-7', '玩家', 'emoji-\u{1F3AE}', 'sur\ufffd']) {
    expect(hashOpenId(openId)).toBe(shortHash(`player:${openId}`));
  }
  expect(hashSessionId('s\ud800')).not.toBe(hashSessionId('s\udbff'));
});
