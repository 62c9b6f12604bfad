// Tells the sockets of this process when their login ends anywhere: one store watch per session (not
// per socket); on a notice the session's record is read again once, however many sockets it has. No
// Redis traffic per socket while nothing changes. Where the store cannot tell (no `changes`, or its
// channel is down), every watched session is read again every POLL_INTERVAL_MS. A record's lifetime
// in the store ends at a known time: one timer per session reads the record again then, since Redis
// tells of an expiry only once its own sampling (or a read) removes the key — minutes later, at worst.
// Where the session store reports changes too (RedisSessionStore), the session is followed the same
// way: one ended outside `login.logout()` gets its token record deleted (docs/sockets.md).
import type { Store } from 'express-session';
import type { RecordChanges, RecordRead } from '../core/store-engine';
import type { TokenRecord } from '../core/token-record';
import { playerKeyOf } from '../core/player-key';
import { ignore } from '../util/ignore';

/** What the watch needs: a read of a session's record by key, and the store's notices. */
export interface LoginWatchSource {
  read(sessionKey: string): Promise<RecordRead>;
  /**
   * When the session's record leaves the store (epoch ms), `undefined` when the store cannot say.
   * Asked only when a known expiry is reached, so renewals moving it cost no read on their own.
   */
  expiryOf?(sessionKey: string, openId: string): Promise<number | undefined>;
  /** Deletes the session's record: the login ends on every process (its session ended without logout). */
  end?(sessionKey: string): Promise<void>;
  changes: RecordChanges | undefined;
}

/** A session store that reports changes to a session (RedisSessionStore). */
interface WatchableSessionStore extends Store {
  /** `onChange` is called (maybe spuriously) whenever session `sid` may have changed anywhere. */
  watchSession(sid: string, onChange: () => void): () => void;
  /** True while the reports are reliable; false: the session is read every POLL_INTERVAL_MS. */
  readonly serving: boolean;
}

const isWatchable = (store: Store | undefined): store is WatchableSessionStore =>
  typeof (store as Partial<WatchableSessionStore> | undefined)?.watchSession === 'function';

/** One socket's interest in its login. */
export interface LoginListener {
  /** The login of this player only: a record of another player means the login ended. */
  readonly openId: string;
  /** A newer record of the login was read (a refresh elsewhere). */
  renewed(record: TokenRecord): void;
  /** The record's lifetime in the store ends at `expiresAt` (epoch ms), as last read. */
  expires?(expiresAt: number): void;
  /** The login ended; called once, after which the listener is dropped. */
  ended(): void;
}

/**
 * The bound while the store cannot tell: a login that ends is seen within this plus one store read
 * (within a second, as docs/sockets.md states).
 */
export const POLL_INTERVAL_MS = 500;

/**
 * At its known expiry a record may still be read for a few ms (its index entry and the key get
 * their TTL in two steps): read again this soon, until it is gone or a later expiry is known.
 */
const EXPIRY_RECHECK_MS = 100;

/** setTimeout's longest delay; a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `read`, one at a time: a call while one is in flight reads once more after it, since that read
 * may have been answered before the change the call tells of. `read` never rejects.
 */
function serially(read: () => Promise<void>): () => void {
  let reading = false;
  let again = false;
  const run = (): void => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    again = false;
    void read().finally(() => {
      reading = false;
      if (again) run();
    });
  };
  return run;
}

interface Watched {
  listeners: Set<LoginListener>;
  unwatch: () => void;
  /** Reads the record again and tells the listeners. */
  check: () => void;
  /** The session, where its store reports changes, and its read. */
  session: { store: WatchableSessionStore; check: () => void } | undefined;
  /** When the record leaves the store, as last known (`Infinity`: not known). */
  expiresAt: number;
  /** Fires at `expiresAt` (or a recheck after it). */
  timer: NodeJS.Timeout | undefined;
  /** The expiry check in flight, which `confirm()` callers share. */
  confirming: Promise<void> | undefined;
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
    return [...this.#sessions.values()].reduce((count, { listeners }) => count + listeners.size, 0);
  }

  /**
   * Follows the login of `sessionKey` for `listener`; returns the unfollow. `expiresAt`: when the
   * record leaves the store, as the caller knows it (the session's marker); the latest known wins.
   * `session`: the socket's (`req.sessionStore`, `req.sessionID`), followed too where its store
   * reports changes.
   */
  follow(
    sessionKey: string,
    listener: LoginListener,
    expiresAt?: number,
    session?: { store: Store | undefined; sid: string },
  ): () => void {
    const watched =
      this.#sessions.get(sessionKey) ?? this.#watch(sessionKey, listener.openId, session);
    watched.listeners.add(listener);
    if (
      expiresAt !== undefined &&
      (watched.expiresAt === Infinity || expiresAt > watched.expiresAt)
    )
      this.#expireAt(sessionKey, watched, expiresAt);
    else if (watched.expiresAt !== Infinity) listener.expires?.(watched.expiresAt);
    return () => this.#unfollow(sessionKey, listener);
  }

  /**
   * Reads the record and, while it lives, its expiry, now: what a socket past its login's known
   * expiry waits for before it uses the token. Resolves once the listeners were told.
   */
  confirm(sessionKey: string): Promise<void> {
    const watched = this.#sessions.get(sessionKey);
    if (watched === undefined) return Promise.resolve();
    return (watched.confirming ??= this.#confirm(sessionKey, watched).finally(() => {
      watched.confirming = undefined;
    }));
  }

  /** Reads the session's record again and tells its listeners; one read in flight per session. */
  check(sessionKey: string): void {
    this.#sessions.get(sessionKey)?.check();
  }

  /** Stops every watch (shutdown); listeners are not told. */
  close(): void {
    for (const watched of this.#sessions.values()) {
      watched.unwatch();
      clearTimeout(watched.timer);
    }
    this.#sessions.clear();
    this.#stopPolling();
  }

  #watch(sessionKey: string, openId: string, session?: { store?: Store; sid: string }): Watched {
    const isCurrent = (): boolean => this.#sessions.get(sessionKey) === watched;
    const watched: Watched = {
      listeners: new Set(),
      unwatch: this.#source.changes?.watch(sessionKey, () => this.check(sessionKey)) ?? ignore,
      check: serially(async () => {
        if (!isCurrent()) return;
        const state = await this.#read(sessionKey);
        if (isCurrent()) this.#settle(sessionKey, watched, state);
      }),
      session: undefined,
      expiresAt: Infinity,
      timer: undefined,
      confirming: undefined,
    };
    const store = session?.store;
    if (isWatchable(store)) {
      const { sid } = session!;
      // A session gone, or holding another login, ends this one: its record is deleted, which
      // every process's record watch sees (and this one's at once, without the notice).
      const check = serially(async () => {
        const holds = await new Promise<boolean>((resolve) =>
          // A failed read ends nothing: the session store may be down for a moment.
          store.get(sid, (error, found) =>
            resolve(!!error || found?.platformLogin?.openId === openId),
          ),
        );
        if (holds || !isCurrent()) return;
        await this.#source.end?.(sessionKey).catch(ignore);
        this.check(sessionKey);
      });
      const unwatchRecord = watched.unwatch;
      const unwatchSession = store.watchSession(sid, check);
      watched.session = { store, check };
      watched.unwatch = () => {
        unwatchRecord();
        unwatchSession();
      };
    }
    this.#sessions.set(sessionKey, watched);
    this.#startPolling();
    return watched;
  }

  /**
   * The record, that there is none, or `undefined` when that is not known now: the store failed, or
   * this process cannot read the record (another may). Nothing ends on `undefined`.
   */
  #read(sessionKey: string): Promise<Exclude<RecordRead, { status: 'unreadable' }> | undefined> {
    return this.#source.read(sessionKey).then(
      (read) => (read.status === 'unreadable' ? undefined : read),
      () => undefined,
    );
  }

  #settle(sessionKey: string, watched: Watched, state: RecordRead | undefined): void {
    if (state === undefined) return; // the next check tells
    for (const listener of [...watched.listeners]) {
      if (state.status === 'found' && state.record.openId === listener.openId) {
        listener.renewed(state.record);
      } else {
        this.#unfollow(sessionKey, listener);
        listener.ended();
      }
    }
  }

  /** The known expiry moved to `expiresAt`: the listeners are told, the timer set to it. */
  #expireAt(sessionKey: string, watched: Watched, expiresAt: number): void {
    watched.expiresAt = expiresAt;
    for (const listener of watched.listeners) listener.expires?.(expiresAt);
    this.#schedule(sessionKey, watched, expiresAt - Date.now());
  }

  #schedule(sessionKey: string, watched: Watched, delayMs: number): void {
    clearTimeout(watched.timer);
    watched.timer = setTimeout(
      () => {
        watched.timer = undefined;
        if (Date.now() < watched.expiresAt)
          this.#schedule(sessionKey, watched, watched.expiresAt - Date.now());
        else void this.confirm(sessionKey);
      },
      Math.min(Math.max(0, delayMs), MAX_TIMER_MS),
    );
    watched.timer.unref();
  }

  /**
   * The known expiry is reached (or a socket asks): the record is read — Redis removes an expired
   * key when it is read, so a record past its TTL reads as ended — and, while it lives, the store
   * is asked how long (a renewal or a refresh elsewhere moved it).
   */
  async #confirm(sessionKey: string, watched: Watched): Promise<void> {
    clearTimeout(watched.timer);
    watched.timer = undefined;
    const state = await this.#read(sessionKey);
    if (this.#sessions.get(sessionKey) !== watched) return;
    if (state?.status === 'found') {
      const expiresAt = await this.#source
        .expiryOf?.(sessionKey, playerKeyOf(state.record))
        .catch(() => undefined);
      if (this.#sessions.get(sessionKey) !== watched) return;
      if (expiresAt !== undefined && expiresAt > Date.now())
        this.#expireAt(sessionKey, watched, expiresAt);
      else if (watched.expiresAt !== Infinity)
        this.#schedule(sessionKey, watched, EXPIRY_RECHECK_MS);
    } else if (state === undefined) {
      // The store cannot tell now: ask again at the polling bound; a store outage ends no login.
      this.#schedule(sessionKey, watched, POLL_INTERVAL_MS);
    }
    this.#settle(sessionKey, watched, state);
  }

  #unfollow(sessionKey: string, listener: LoginListener): void {
    const watched = this.#sessions.get(sessionKey);
    if (watched === undefined || !watched.listeners.delete(listener)) return;
    if (watched.listeners.size > 0) return;
    watched.unwatch();
    clearTimeout(watched.timer);
    this.#sessions.delete(sessionKey);
    if (this.#sessions.size === 0) this.#stopPolling();
  }

  /** One timer for all sessions; it reads only what the stores' notices cannot tell now. */
  #startPolling(): void {
    if (this.#poller !== undefined) return;
    this.#poller = setInterval(() => {
      const recordsLive = this.#source.changes?.live === true;
      for (const watched of this.#sessions.values()) {
        if (!recordsLive) watched.check();
        if (watched.session?.store.serving === false) watched.session.check();
      }
    }, POLL_INTERVAL_MS);
    this.#poller.unref();
  }

  #stopPolling(): void {
    clearInterval(this.#poller);
    this.#poller = undefined;
  }
}
