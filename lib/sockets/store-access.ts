// What sockets need of the token store, in one place: the key a login is stored under, its record,
// when that leaves the store, its deletion, and the store's change notices.
import { hashSessionId } from '../core/hash';
import type { StoreEngine } from '../core/store-engine';
import type { LoginWatchSource } from './login-watch';

/** The store as sockets use it: what the login watch reads (each part there), and the key of a login. */
export interface LoginAccess extends Required<LoginWatchSource> {
  /** The key the store, its lock and the refresh coordinator know a session's login by. */
  keyOf(sessionId: string): string;
}

/** The store's parts as sockets read them. */
export function loginAccessOf(store: StoreEngine): LoginAccess {
  const { records, changes } = store;
  return {
    keyOf: hashSessionId,
    read: (sessionKey) => records.get(sessionKey),
    expiryOf: async (sessionKey, openId) =>
      (await records.loginsOf(openId)).find((login) => login.sessionKey === sessionKey)?.expiresAt,
    end: async (sessionKey) => void (await records.delete(sessionKey)),
    changes,
  };
}
