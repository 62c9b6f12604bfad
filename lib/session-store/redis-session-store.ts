// An express-session store on Redis (node-redis or ioredis, through the package's command seam)
// that serves sessions from this process's memory, kept coherent by Redis client tracking as the
// token record cache is (the same KeyTracking), and renews a session's TTL only once part
// of its lifetime has passed: a logged-in request then sends no Redis command at all. Keys and
// values are connect-redis's (`sess:<id>`, the session as JSON), so a rolling deploy can switch.
import { Store, type SessionData } from 'express-session';
import { withDeadline } from '../stores/redis/with-deadline';
import type { KeyTracker } from '../stores/redis/key-tracking';
import { trackKeys } from '../stores/redis/cluster-key-tracking';
import { ChangeWatchers } from '../stores/change-waiters';
import { redisCommands, type RedisCommands } from '../stores/redis/redis-client';
import { READ_WITH_TTL } from '../stores/scripts';
import { parseOptions } from '../util/parse-options';
import { SessionCache } from './session-cache';
import {
  redisSessionStoreOptionsSchema,
  type RedisSessionStoreOptions,
} from './session-store-options';

type Callback<T = void> = (error?: unknown, value?: T) => void;

export class RedisSessionStore extends Store {
  readonly #redis: RedisCommands;
  readonly #prefix: string;
  readonly #ttlSeconds: number;
  /** A cached session whose key has less than this share of its TTL left is renewed. */
  readonly #renewBelow: number;
  readonly #timeoutMs: number;
  readonly #cache: SessionCache;
  readonly #tracking: KeyTracker | undefined;
  /** Who follows a session (the sockets of it: lib/sockets/session-follow.ts), by key. */
  readonly #watchers = new ChangeWatchers();

  constructor(options: RedisSessionStoreOptions) {
    super();
    const config = parseOptions(redisSessionStoreOptionsSchema, options, 'RedisSessionStore');
    this.#redis = redisCommands(config.redis);
    this.#prefix = config.prefix;
    this.#ttlSeconds = config.ttlSeconds;
    this.#renewBelow = 1 - config.renewAfter;
    this.#timeoutMs = config.operationTimeoutMs;
    const cache = (this.#cache = new SessionCache(config.maxCachedSessions));
    // The record cache's key tracking, on a prefix of its own (lib/stores/redis/key-tracking.ts; on
    // a Cluster one per master, cluster-key-tracking.ts): memory serves only while Redis's reports
    // are live.
    if (config.maxCachedSessions > 0) {
      const watchers = this.#watchers;
      this.#tracking = trackKeys(this.#redis, this.#prefix, {
        changed: (key) => {
          cache.reported(key);
          watchers.wake(key);
        },
        allChanged: () => {
          cache.invalidateAll();
          watchers.wakeAll();
        },
        liveChanged: (live) => {
          cache.setActive(live);
          watchers.wakeAll(); // changes may have been missed meanwhile
        },
        unavailable: (reason, by) => this.emit('cacheUnavailable', { reason, by }),
      });
    }
  }

  /** True while sessions are served from memory (the invalidation channel is up). */
  get serving(): boolean {
    return this.#cache.active;
  }

  /**
   * Calls `onChange` (maybe spuriously) whenever session `sid` may have changed anywhere — a
   * write, `destroy()`, a `DEL` by hand — while {@link sessionWatchLive}. What sockets use to end
   * a login whose session ended outside `login.logout()`. Costs no Redis command.
   */
  watchSession(sid: string, onChange: () => void): () => void {
    return this.#watchers.watch([this.#prefix + sid], onChange);
  }

  /** True while {@link watchSession} is told of every change (the invalidation channel is up). */
  get sessionWatchLive(): boolean {
    return this.#cache.active;
  }

  /** Sessions held in memory now. */
  get cachedSessions(): number {
    return this.#cache.size;
  }

  /** Closes the tracking connection (the client itself is the app's). */
  async close(): Promise<void> {
    await this.#tracking?.close();
  }

  override get(sid: string, callback: Callback<SessionData | null>): void {
    const key = this.#prefix + sid;
    const now = Date.now();
    const cached = this.#cache.active ? this.#cache.lookup(key, now) : undefined;
    if (cached !== undefined) {
      // Answered on the loop's next turn, as express-session's MemoryStore answers: a request
      // finished inside its own socket's read keeps the loop from batching the connections that
      // are ready together (bench request-cost, node-redis, 32 connections: 1.6× the req/s and
      // 0.61× the CPU per request of answering at once; process.nextTick and microtasks do not help).
      const { json } = cached;
      setImmediate(() => this.#answer(callback, json));
      return;
    }
    const ticket = this.#cache.beginRead(key);
    this.#deadline(this.#redis.script(READ_WITH_TTL, [key], [], 'text'), 'a session read').then(
      (reply) => {
        const [json, pttlMs] = reply as [string | null, number];
        this.#cache.endRead(ticket, json, Number(pttlMs), now);
        this.#answer(callback, json);
      },
      (error: unknown) => {
        this.#cache.abandonRead(ticket);
        callback(error);
      },
    );
  }

  override set(sid: string, session: SessionData, callback?: Callback): void {
    const key = this.#prefix + sid;
    const ttl = this.#ttlOf(session);
    // This process's own write: the entry goes now, not when Redis's message comes back.
    this.#cache.reported(key);
    const done =
      ttl > 0
        ? this.#redis.run('SET', key, [JSON.stringify(session), 'EX', String(ttl)])
        : this.#redis.run('DEL', key);
    this.#deadline(done, 'a session write').then(
      () => callback?.(),
      (error: unknown) => callback?.(error),
    );
  }

  /**
   * Renews the key's TTL only when less than `1 - renewAfter` of it is left (known from the cached
   * entry); without an entry (cache off, or just changed), renews as connect-redis does.
   *
   * Answers at once, the renewal running on: express-session holds the end of the response until
   * `touch` answers, and there is nothing a response could do with its outcome (a failed renewal
   * is tried again by the next request, the session still holding at least `1 - renewAfter` of
   * its lifetime). Waiting made a request that had already failed on a stalled Redis wait out a
   * second deadline, and an answer on a later turn splits the response into two writes.
   */
  override touch(sid: string, session: SessionData, callback?: Callback): void {
    const key = this.#prefix + sid;
    const ttl = this.#ttlOf(session);
    const now = Date.now();
    const cached = this.#cache.active ? this.#cache.lookup(key, now) : undefined;
    // ttl <= 0 (a cookie already expired): EXPIRE deletes the key, as connect-redis's touch does.
    const due =
      ttl <= 0 || cached === undefined || cached.expiresAt - now <= ttl * 1000 * this.#renewBelow;
    if (due) {
      this.#deadline(this.#redis.run('EXPIRE', key, [String(ttl)]), 'a session renewal').then(
        () => this.#cache.extend(key, now + ttl * 1000),
        () => undefined,
      );
    }
    callback?.();
  }

  override destroy(sid: string, callback?: Callback): void {
    const key = this.#prefix + sid;
    this.#cache.reported(key);
    this.#deadline(this.#redis.run('DEL', key), 'a session delete').then(
      () => {
        // Told here at once, not when Redis's report comes back.
        this.#watchers.wake(key);
        callback?.();
      },
      (error: unknown) => callback?.(error),
    );
  }

  #deadline<T>(operation: Promise<T>, what: string): Promise<T> {
    return withDeadline(operation, this.#timeoutMs, what, 'session store');
  }

  /** connect-redis's rule: the cookie's expiry when it has one, else the store's TTL. */
  #ttlOf(session: SessionData): number {
    const expires = session.cookie?.expires;
    if (expires) return Math.ceil((new Date(expires).getTime() - Date.now()) / 1000);
    return this.#ttlSeconds;
  }

  #answer(callback: Callback<SessionData | null>, json: string | null): void {
    if (json === null) {
      callback(undefined, null);
      return;
    }
    let session: SessionData;
    try {
      session = JSON.parse(json) as SessionData;
    } catch (error) {
      callback(error);
      return;
    }
    callback(undefined, session);
  }
}
