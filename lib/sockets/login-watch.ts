// Tells the sockets of this process when their login ends anywhere: one store watch per session (not
// per socket); on a notice the session's record is read again once, however many sockets it has. No
// Redis traffic per socket while nothing changes. Where the store cannot tell (no `changes`, or its
// channel is down), every watched session is read again every POLL_INTERVAL_MS.
import type { TokenRecord } from '../core/token-record';
import { ignore } from '../util/ignore';

/** The store's change notices (the `changes` part of the store contract). */
export interface ChangeNotices {
  /** onChange is called (maybe spuriously) whenever the session's record may have changed anywhere. */
  watch(sessionKey: string, onChange: () => void): () => void;
  /** True while notices are reliable; false: the watch polls. */
  readonly live: boolean;
}

/** What a re-read found: the login's record, or that it ended. */
export type LoginState =
  | { status: 'live'; record: TokenRecord }
  | { status: 'ended' }
  /** Not known now (the store failed, or this process cannot decrypt it): nothing ends. */
  | { status: 'unknown' };

/** What the watch needs: a read of a session's record by key, and the store's notices. */
export interface LoginWatchSource {
  read(sessionKey: string): Promise<LoginState>;
  changes: ChangeNotices | undefined;
}

/** One socket's interest in its login. */
export interface LoginListener {
  /** The login of this player only: a record of another player means the login ended. */
  readonly openId: string;
  /** A newer record of the login was read (a refresh elsewhere). */
  renewed(record: TokenRecord): void;
  /** The login ended; called once, after which the listener is dropped. */
  ended(): void;
}

/**
 * The bound while the store cannot tell: a login that ends is seen within this plus one store read
 * (within a second, as docs/sockets.md states).
 */
export const POLL_INTERVAL_MS = 500;

interface Watched {
  listeners: Set<LoginListener>;
  unwatch: () => void;
  /** A re-read is in flight; `again`: a notice came meanwhile, so read once more after it. */
  reading: boolean;
  again: boolean;
}

/** The sessions this process has sockets for, each watched once. */
export class LoginWatch {
  readonly #source: LoginWatchSource;
  readonly #sessions = new Map<string, Watched>();
  #poller: NodeJS.Timeout | undefined;

  constructor(source: LoginWatchSource) {
    this.#source = source;
  }

  /** How many sessions are watched (for tests and metrics). */
  get size(): number {
    return this.#sessions.size;
  }

  /** How many sockets follow their login (for metrics). */
  get listenerCount(): number {
    let count = 0;
    for (const watched of this.#sessions.values()) count += watched.listeners.size;
    return count;
  }

  /** Follows the login of `sessionKey` for `listener`; returns the unfollow. */
  follow(sessionKey: string, listener: LoginListener): () => void {
    let watched = this.#sessions.get(sessionKey);
    if (watched === undefined) {
      const changes = this.#source.changes;
      watched = {
        listeners: new Set(),
        unwatch: changes?.watch(sessionKey, () => this.check(sessionKey)) ?? ignore,
        reading: false,
        again: false,
      };
      this.#sessions.set(sessionKey, watched);
      this.#startPolling();
    }
    watched.listeners.add(listener);
    return () => this.#unfollow(sessionKey, listener);
  }

  /** Reads the session's record again and tells its listeners; one read in flight per session. */
  check(sessionKey: string): void {
    const watched = this.#sessions.get(sessionKey);
    if (watched === undefined) return;
    if (watched.reading) {
      watched.again = true;
      return;
    }
    watched.reading = true;
    void this.#source
      .read(sessionKey)
      .catch((): LoginState => ({ status: 'unknown' }))
      .then((state) => {
        watched.reading = false;
        this.#settle(sessionKey, watched, state);
        if (watched.again && this.#sessions.get(sessionKey) === watched) {
          watched.again = false;
          this.check(sessionKey);
        }
      });
  }

  /** Stops every watch (shutdown); listeners are not told. */
  close(): void {
    for (const watched of this.#sessions.values()) watched.unwatch();
    this.#sessions.clear();
    this.#stopPolling();
  }

  #settle(sessionKey: string, watched: Watched, state: LoginState): void {
    if (state.status === 'unknown') return; // a store outage ends no login; the next check tells
    for (const listener of [...watched.listeners]) {
      if (state.status === 'live' && state.record.openId === listener.openId) {
        listener.renewed(state.record);
      } else {
        this.#unfollow(sessionKey, listener);
        listener.ended();
      }
    }
  }

  #unfollow(sessionKey: string, listener: LoginListener): void {
    const watched = this.#sessions.get(sessionKey);
    if (watched === undefined || !watched.listeners.delete(listener)) return;
    if (watched.listeners.size > 0) return;
    watched.unwatch();
    this.#sessions.delete(sessionKey);
    if (this.#sessions.size === 0) this.#stopPolling();
  }

  /** One timer for all sessions; it reads only while the store's notices are not reliable. */
  #startPolling(): void {
    if (this.#poller !== undefined) return;
    this.#poller = setInterval(() => {
      if (this.#source.changes?.live === true) return;
      for (const sessionKey of this.#sessions.keys()) this.check(sessionKey);
    }, POLL_INTERVAL_MS);
    this.#poller.unref();
  }

  #stopPolling(): void {
    clearInterval(this.#poller);
    this.#poller = undefined;
  }
}
