// The keys the engine (derived-engine.ts) keeps its state under in a store: one place, so that a
// shipped store's fast paths (StoreFastPaths) read and write exactly what the derived steps do.
import { hashOpenId } from './hash';

export const storeKeys = {
  /** A session's token record. */
  record: (sessionKey: string) => `t:${sessionKey}`,
  /** A session's refresh lock: its owner. */
  lock: (sessionKey: string) => `l:${sessionKey}`,
  /** A hold on refreshing one version of a record (or on code exchanges): that version. */
  hold: (sessionKey: string) => `h:${sessionKey}`,
  /** A one-time claim. */
  claim: (key: string) => `k:${key}`,
  /** A fixed-window counter: its count, its window the value's lifetime. */
  counter: (key: string) => `w:${key}`,
  /** A player's index (JSON): session key → its record's expiry; MAX_INDEXED_LOGINS at most. */
  player: (playerKey: string) => `p:${hashOpenId(playerKey)}`,
  /** The log-out generation at which a player was last logged out everywhere. */
  loggedOut: (playerKey: string) => `o:${hashOpenId(playerKey)}`,
  /** The store-wide log-out generation. */
  generation: 'g',
};

/** The session a key of `kind` (record, lock) names, or `undefined` for a key of another kind. */
const sessionKeyOf = (kind: (sessionKey: string) => string) => {
  const start = kind('');
  return (key: string): string | undefined =>
    key.startsWith(start) ? key.slice(start.length) : undefined;
};
/** Whether a store key is a session's token record, and whose. */
export const sessionKeyOfRecord = sessionKeyOf(storeKeys.record);
/** Whether a store key is a session's refresh lock, and whose. */
export const sessionKeyOfLock = sessionKeyOf(storeKeys.lock);

/**
 * The logins one player index keeps: a login beyond them ends the index's oldest
 * (docs/operations.md, "Log a player out everywhere"). Every write of an index rewrites it whole,
 * so its size is each entry's cost.
 */
export const MAX_INDEXED_LOGINS = 32;
