// Ends a socket's login when its session ends outside `login.logout()`: the app's own
// `req.session.destroy()` or `regenerate()`, an operator's `DEL sess:<id>`, the session's expiry.
// Such an end leaves the token record in place, and the sockets would keep a working token for the
// record's whole lifetime. Where the session store can tell of a change to a session (the
// package's RedisSessionStore, through Redis client tracking), each session with sockets is
// watched once; on a notice the session is read, and when it is gone or no longer holds this login
// the token record is deleted — the end of the login every process's record watch already sees.
import type { Store } from 'express-session';
import { ignore } from '../util/ignore';
import { POLL_INTERVAL_MS } from './login-watch';

/** A session store that reports changes to a session (RedisSessionStore). */
interface WatchableSessionStore extends Store {
  /** `onChange` is called (maybe spuriously) whenever session `sid` may have changed anywhere. */
  watchSession(sid: string, onChange: () => void): () => void;
  /** True while the reports are reliable; false: the followed sessions are read every 500 ms. */
  readonly serving: boolean;
}

const isWatchable = (store: Store | undefined): store is WatchableSessionStore =>
  typeof (store as Partial<WatchableSessionStore> | undefined)?.watchSession === 'function';

interface Followed {
  store: WatchableSessionStore;
  openId: string;
  sessionKey: string;
  sockets: number;
  unwatch: () => void;
  reading: boolean;
  /** A notice came while a read was in flight: that read may predate the change, so read again. */
  again: boolean;
}

/** The sessions this process has sockets for, each followed once in its session store. */
export class SessionFollow {
  readonly #endLogin: (sessionKey: string) => Promise<void>;
  readonly #sessions = new Map<string, Followed>();
  #poller: NodeJS.Timeout | undefined;

  /** `endLogin` deletes the session's token record (the record watch then ends the sockets). */
  constructor(endLogin: (sessionKey: string) => Promise<void>) {
    this.#endLogin = endLogin;
  }

  /**
   * Follows session `sid` of `store` for one socket; returns the unfollow. A store that cannot
   * report changes is not followed (docs/sockets.md says what that leaves).
   */
  follow(store: Store | undefined, sid: string, sessionKey: string, openId: string): () => void {
    if (!isWatchable(store)) return ignore;
    let followed = this.#sessions.get(sid);
    if (followed === undefined) {
      followed = {
        store,
        openId,
        sessionKey,
        sockets: 0,
        unwatch: store.watchSession(sid, () => this.#read(sid)),
        reading: false,
        again: false,
      };
      this.#sessions.set(sid, followed);
      this.#startPolling();
    }
    followed.sockets += 1;
    let followedNow = true;
    return () => {
      if (!followedNow) return;
      followedNow = false;
      this.#unfollow(sid);
    };
  }

  /** Reads the session; a session gone, or holding another login, ends this one. */
  #read(sid: string): void {
    const followed = this.#sessions.get(sid);
    if (followed === undefined) return;
    if (followed.reading) {
      followed.again = true;
      return;
    }
    followed.reading = true;
    followed.again = false;
    followed.store.get(sid, (error, session) => {
      followed.reading = false;
      if (this.#sessions.get(sid) !== followed) return;
      // A failed read ends nothing: the session store may be down for a moment.
      const failed = error !== undefined && error !== null;
      if (!failed && session?.platformLogin?.openId !== followed.openId) {
        this.#endLogin(followed.sessionKey).catch(ignore);
      } else if (followed.again) {
        this.#read(sid);
      }
    });
  }

  #unfollow(sid: string): void {
    const followed = this.#sessions.get(sid);
    if (followed === undefined || (followed.sockets -= 1) > 0) return;
    followed.unwatch();
    this.#sessions.delete(sid);
    if (this.#sessions.size === 0) {
      clearInterval(this.#poller);
      this.#poller = undefined;
    }
  }

  /** While a store's reports are down its sessions are read at the record watch's bound. */
  #startPolling(): void {
    if (this.#poller !== undefined) return;
    this.#poller = setInterval(() => {
      for (const [sid, followed] of this.#sessions) if (!followed.store.serving) this.#read(sid);
    }, POLL_INTERVAL_MS);
    this.#poller.unref();
  }
}
