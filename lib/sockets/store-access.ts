// What sockets need of the token store, in one place: the key a login is stored under,
// a read that says live / ended / unknown, and the store's change notices.
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
    read: async (sessionKey) => {
      const read = await records.get(sessionKey);
      // A record this process cannot decrypt ends nothing: another process may read it.
      if (read.status === 'unreadable') return { status: 'unknown' };
      return read.status === 'found'
        ? { status: 'live', record: read.record }
        : { status: 'ended' };
    },
    expiryOf: async (sessionKey, openId) =>
      (await records.loginsOf(openId)).find((login) => login.sessionKey === sessionKey)?.expiresAt,
    end: async (sessionKey) => void (await records.delete(sessionKey)),
    changes,
  };
}
