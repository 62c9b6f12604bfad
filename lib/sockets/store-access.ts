// What sockets need of the token store, in one place: the key a login is stored under,
// a read that says live / ended / unknown, and the store's change notices.
import { hashSessionId } from '../core/hash';
import type { RecordChanges, StoreEngine } from '../core/store-engine';
import type { LoginState } from './login-watch';

/** The store as sockets use it. */
export interface LoginAccess {
  /** The key the store, its lock and the refresh coordinator know a session's login by. */
  keyOf(sessionId: string): string;
  /** The session's record: live, ended (absent), or unknown (this process cannot read it). */
  read(sessionKey: string): Promise<LoginState>;
  /**
   * When the session's record leaves the store (epoch ms), from the player's index (whose entry
   * every write and renewal of the record sets with it); `undefined` when it lists none.
   */
  expiryOf(sessionKey: string, openId: string): Promise<number | undefined>;
  /** Deletes the session's record: its login ends on every process (a session ended without logout). */
  end(sessionKey: string): Promise<void>;
  /** Change notices, when the store has them (else the watch polls). */
  changes: RecordChanges | undefined;
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
