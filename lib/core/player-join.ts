// The player across registrations: a login joins its player's unionid index as soon as the token
// endpoint's answer carries a unionid (never from anything a browser sends), and a player is
// reached through every index key their logins lead to: the registration's openId, the unionid,
// and the openIds the unionid's logins have in other registrations. See docs/registrations.md.
import type { EventEmitter } from 'node:events';
import type { PlatformLoginEvents } from '../observability/events';
import type { PlayerLogin, TokenRecords } from './store-engine';
import type { TokenRecord } from './token-record';
import { isIndexedUnder, playerKeyOf, unionKeyOf } from './player-key';
import { ignore } from '../util/ignore';

/** Index keys a player's reach follows at most: a bound on a player's registrations and unionids. */
const MAX_PLAYER_KEYS = 32;

/** A login just written: its record, and the unionid before and in the platform's answer. */
export interface WrittenLogin {
  sessionKey: string;
  record: TokenRecord;
  ttlMs: number;
  /** The record's unionid before this answer (undefined for a new login). */
  before: string | undefined;
  /** The unionid the token endpoint's answer carried, if any. */
  answered: string | undefined;
  via: 'exchange' | 'refresh';
  /**
   * Whether the game has several registrations: with one, a unionid joins nothing its openId does
   * not, and the index entry would only cost an entry two round trips.
   */
  joins: boolean;
}

/**
 * Indexes a written login under its unionid, for as long as its record lives, and says when it
 * joined its player or when the platform answered another unionid than the login's (kept, not
 * followed). A store failure here leaves the join to the record's next write or renewal.
 */
export async function joinPlayer(
  records: TokenRecords,
  events: EventEmitter<PlatformLoginEvents>,
  login: WrittenLogin,
): Promise<void> {
  const { sessionKey, record, before, answered } = login;
  const fields = {
    openId: record.openId,
    registration: record.registration,
    sessionHash: sessionKey,
  };
  if (before !== undefined && answered !== undefined && answered !== before)
    events.emit('unionIdRefused', fields);
  if (record.unionId === undefined || !login.joins) return;
  await records.renew(sessionKey, unionKeyOf(record.unionId), login.ttlMs).catch(ignore);
  if (before === undefined) events.emit('playerJoined', { ...fields, via: login.via });
}

/** Every index key of the player `start` names, and their live logins, freshest first. */
export async function reachPlayer(records: TokenRecords, start: string) {
  const keys = [start];
  const logins = new Map<string, PlayerLogin>();
  for (let at = 0; at < keys.length && at < MAX_PLAYER_KEYS; at += 1) {
    const key = keys[at]!;
    for (const login of await records.loginsOf(key)) {
      if (logins.has(login.sessionKey)) continue;
      const read = await records.get(login.sessionKey);
      // Gone since, or not this player's (an index entry outliving a rewrite): not theirs.
      if (read.status !== 'found' || !isIndexedUnder(read.record, key)) continue;
      logins.set(login.sessionKey, login);
      const { unionId } = read.record;
      for (const next of [playerKeyOf(read.record), unionId && unionKeyOf(unionId)])
        if (next && !keys.includes(next)) keys.push(next);
    }
  }
  return { keys, logins: [...logins.values()].sort((a, b) => b.expiresAt - a.expiresAt) };
}

/**
 * Ends every login of the player `start` names, in every registration, browser and process;
 * resolves how many. Each key is logged out as `deletePlayer` does, so an entry of the player
 * under way under any of them is refused at its write.
 */
export async function logoutReached(records: TokenRecords, start: string): Promise<number> {
  const { keys } = await reachPlayer(records, start);
  let ended = 0;
  for (const key of keys) ended += await records.deletePlayer(key);
  return ended;
}
