// Which player a login belongs to, as the store's player index names it. A login is indexed under
// its registration's openId (the bare openId for the first registration, so indexes written before
// several registrations existed still hold), and, once the platform gave a unionid, also under the
// unionid, which joins the player's logins across registrations (see docs/registrations.md).
import type { TokenRecord } from './token-record';

/** The index key of `login`'s player (a record, or a session's marker) within its registration. */
export const playerKeyOf = (login: Pick<TokenRecord, 'openId' | 'registration'>): string =>
  login.registration === undefined ? login.openId : `r:${login.registration}:${login.openId}`;

/** The index key that joins a player's logins across registrations. */
export const unionKeyOf = (unionId: string): string => `u:${unionId}`;

/** Whether `record` is listed rightly under the index key `key`. */
export const isIndexedUnder = (record: TokenRecord, key: string): boolean =>
  playerKeyOf(record) === key ||
  (record.unionId !== undefined && unionKeyOf(record.unionId) === key);
