// What sockets and jobs need of the token store, in one place: the key a login is stored under,
// a read that says live / ended / unknown, the store's change notices and a player's logins.
import type { TokenStore } from '../core/token-store';
import type { TokenRecord } from '../core/token-record';
import type { ChangeNotices, LoginState } from './login-watch';

/** The store as sockets and jobs use it. */
export interface LoginAccess {
  /** The key the store, its lock and the refresh coordinator know a session's login by. */
  keyOf(sessionId: string): string;
  /** The session's record: live, ended (absent), or unknown (the store failed, or cannot decrypt it). */
  read(sessionKey: string): Promise<LoginState>;
  /** Change notices, when the store has them. */
  changes: ChangeNotices | undefined;
  /** The player's live logins, freshest first; `undefined` when the store keeps no player index. */
  loginsOf:
    ((openId: string) => Promise<Array<{ sessionKey: string; expiresAt: number }>>) | undefined;
}

/**
 * The store of the contract before issue 24: keyed by the raw session id, no change notices (the
 * watch polls), no player index listing. Replaced when the store contract's `records` / `changes`
 * land (see the merge notes in docs/sockets.md).
 */
export function loginAccessOf(store: TokenStore): LoginAccess {
  return {
    keyOf: (sessionId) => sessionId,
    read: async (sessionKey) => {
      const record: TokenRecord | undefined = await store.get(sessionKey);
      return record === undefined ? { status: 'ended' } : { status: 'live', record };
    },
    changes: undefined,
    loginsOf: undefined,
  };
}
