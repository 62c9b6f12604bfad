// An express-session store on Redis (node-redis or ioredis, through the package's command seam)
// that serves sessions from this process's memory, kept coherent by Redis client tracking as the
// token record cache is (the same KeyTracking), and renews a session's TTL only once part
// of its lifetime has passed: a logged-in request then sends no Redis command at all. Keys and
// values are connect-redis's (`sess:<id>`, the session as JSON), so a rolling deploy can switch.
import type { ServerResponse } from 'node:http';
import { Store, type SessionData } from 'express-session';
import {
  SESSION_REDIS_KEYS,
  type LoginSessionWrite,
  type SessionRedisKeys,
} from '../core/store-engine';
import { withDeadline } from '../redis/with-deadline';
import type { KeyTracker } from '../caching/key-tracking';
import { trackKeys } from '../caching/cluster-key-tracking';
import { TrackedCache } from '../caching/tracked-cache';
import type { RedisCommands } from '../redis/commands';
import { redisCommands } from '../redis/redis-client';
import { READ_WITH_TTL } from '../stores/scripts';
import { parseOptions } from '../util/parse-options';
import { ignore } from '../util/ignore';
import {
  redisSessionStoreOptionsSchema,
  type RedisSessionStoreOptions,
} from './session-store-options';

type Callback<T = void> = (error?: unknown, value?: T) => void;

/** A write of the session handed to the login's own write: resolves whether it was written. */
type JoinedWrite = (session: LoginSessionWrite) => Promise<boolean>;

/**
 * A new login's session, written with its token record in one step (TokenStore `logins`), from
 * `regenerate` to the end of the request. Until {@link end}, `destroy` of the session replaced
 * sends nothing (its key goes with the joined write), and the first `set` of the new session hands
 * its write to {@link writeWith}'s function instead of sending it. express-session writes a
 * regenerated session again when the request ends (it does not know the explicit save happened):
 * a `set` of exactly the value just written sends nothing either.
 */
export interface SessionJoin {
  /** Hands the next write of session `sid` to `write`. */
  writeWith(sid: string, write: JoinedWrite): void;
  /** The joined write's error, when it failed (the `set` answers it too). */
  readonly error: unknown;
  /** Ends the join; deletes the replaced session if no joined write took it. Never rejects. */
  end(): Promise<void>;
}

/**
 * Where a RedisSessionStore keeps a session (the token store's durability waits for it) and, but on
 * a Cluster (keys on several nodes), the joined writes of a new login's session (the entry's).
 */
export interface SessionRedis extends SessionRedisKeys {
  /** Joins the writes of the request that answers with `res`, whose session is `sid` now. */
  join?(sid: string, res: ServerResponse): SessionJoin;
}

/** One join's state, by the session keys it concerns. */
interface Joining {
  /** The session replaced, while its delete waits for the joined write. */
  replaces?: string;
  write?: JoinedWrite;
  /** The value the joined write stored, while a repeat of it may come. */
  written?: string;
  error?: unknown;
}

export class RedisSessionStore extends Store {
  readonly #redis: RedisCommands;
  readonly #prefix: string;
  readonly #ttlSeconds: number;
  /** A cached session whose key has less than this share of its TTL left is renewed. */
  readonly #renewBelow: number;
  readonly #timeoutMs: number;
  /**
   * The stored JSON by session key, and who follows a session (the sockets of it:
   * lib/sockets/login-watch.ts): docs/caching.md.
   */
  readonly #cache: TrackedCache<string>;
  readonly #tracking: KeyTracker | undefined;
  /** The joins under way, by the keys of the sessions they replace and write. */
  readonly #joins = new Map<string, Joining>();
  readonly #client: object;

  constructor(options: RedisSessionStoreOptions) {
    super();
    const config = parseOptions(redisSessionStoreOptionsSchema, options, 'RedisSessionStore');
    this.#redis = redisCommands(config.redis);
    this.#client = config.redis;
    this.#prefix = config.prefix;
    this.#ttlSeconds = config.ttlSeconds;
    this.#renewBelow = 1 - config.renewAfter;
    this.#timeoutMs = config.operationTimeoutMs;
    const cache = (this.#cache = new TrackedCache(config.maxCachedSessions));
    // The record cache's key tracking, on a prefix of its own: memory serves only while Redis's
    // reports are live.
    if (config.maxCachedSessions > 0) {
      this.#tracking = trackKeys(this.#redis, this.#prefix, {
        ...cache.listener,
        unavailable: (reason, by) => this.emit('cacheUnavailable', { reason, by }),
      });
    }
  }

  /**
   * True while sessions are served from memory (the invalidation channel is up), and so while
   * {@link watchSession} is told of every change.
   */
  get serving(): boolean {
    return this.#cache.active;
  }

  /**
   * Calls `onChange` (maybe spuriously) whenever session `sid` may have changed anywhere — a
   * write, `destroy()`, a `DEL` by hand — while {@link serving}. What sockets use to end
   * a login whose session ended outside `login.logout()`. Costs no Redis command.
   */
  watchSession(sid: string, onChange: () => void): () => void {
    return this.#cache.watch([this.#prefix + sid], onChange);
  }

  /** Sessions held in memory now. */
  get cachedSessions(): number {
    return this.#cache.size;
  }

  /** Where a session lives, and the joined writes of a new login's session (lib/entry/entry-redemption.ts). */
  get [SESSION_REDIS_KEYS](): SessionRedis {
    const keys = { client: this.#client, keyOf: (sid: string) => this.#prefix + sid };
    if (this.#redis.topology === 'cluster') return keys;
    return { ...keys, join: (sid, res) => this.#join(sid, res) };
  }

  /** Closes the tracking connection (the client itself is the app's). */
  async close(): Promise<void> {
    await this.#tracking?.close();
  }

  override get(sid: string, callback: Callback<SessionData | null>): void {
    const key = this.#prefix + sid;
    const now = Date.now();
    const cached = this.#cache.entryOf(key, now);
    if (cached !== undefined) {
      // Answered on the loop's next turn, as express-session's MemoryStore answers: a request
      // finished inside its own socket's read keeps the loop from batching the connections that
      // are ready together (bench/sections/request-cost.ts; nextTick and microtasks do not help).
      const json = cached.value;
      setImmediate(() => this.#answer(callback, json));
      return;
    }
    const ticket = this.#cache.beginRead(key);
    this.#deadline(this.#redis.script(READ_WITH_TTL, [key], []), 'a session read').then(
      (reply) => {
        const [json, pttlMs] = reply as [string | null, number];
        // Kept only with a TTL: a key without one (set by hand) is read each time.
        if (json === null || Number(pttlMs) <= 0) this.#cache.abandonRead(ticket);
        else this.#cache.endRead(ticket, key, json, now + Number(pttlMs));
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
    const joining = this.#joins.size === 0 ? undefined : this.#joins.get(key);
    if (joining !== undefined && this.#joined(key, joining, session, callback)) return;
    const ttl = this.#ttlOf(session);
    // This process's own write: the entry goes now, not when Redis's message comes back.
    this.#cache.changed(key);
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
   * entry); without an entry (cache off, or just changed), renews as connect-redis does. Answers at
   * once, the renewal running on: express-session holds the response until `touch` answers, and a
   * failed renewal is tried again by the next request (docs/session-store.md).
   */
  override touch(sid: string, session: SessionData, callback?: Callback): void {
    const key = this.#prefix + sid;
    const ttl = this.#ttlOf(session);
    const now = Date.now();
    const cached = this.#cache.entryOf(key, now);
    // ttl <= 0 (a cookie already expired): EXPIRE deletes the key, as connect-redis's touch does.
    const due =
      ttl <= 0 || cached === undefined || cached.expiresAt - now <= ttl * 1000 * this.#renewBelow;
    if (due) {
      this.#deadline(this.#redis.run('EXPIRE', key, [String(ttl)]), 'a session renewal').then(
        () => {
          // The entry serves until the key's new expiry.
          if (cached !== undefined) cached.expiresAt = now + ttl * 1000;
        },
        () => undefined,
      );
    }
    callback?.();
  }

  override destroy(sid: string, callback?: Callback): void {
    const key = this.#prefix + sid;
    this.#cache.changed(key);
    const joining = this.#joins.size === 0 ? undefined : this.#joins.get(key);
    if (joining !== undefined && joining.replaces === undefined) {
      // regenerate's delete: it goes with the joined write (or at the join's end).
      joining.replaces = key;
      callback?.();
      return;
    }
    this.#deadline(this.#redis.run('DEL', key), 'a session delete').then(
      () => {
        // Told here at once, not when Redis's report comes back.
        this.#cache.changed(key);
        callback?.();
      },
      (error: unknown) => callback?.(error),
    );
  }

  #join(sid: string, res: ServerResponse): SessionJoin {
    const joining: Joining = {};
    const keys = [this.#prefix + sid];
    this.#joins.set(keys[0]!, joining);
    const forget = (): void => {
      for (const key of keys) if (this.#joins.get(key) === joining) this.#joins.delete(key);
    };
    // A repeat of the joined write comes before the response ends, or never.
    res.once('close', forget);
    return {
      writeWith: (newSid, write) => {
        const key = this.#prefix + newSid;
        keys.push(key);
        joining.write = write;
        this.#joins.set(key, joining);
      },
      get error() {
        return joining.error;
      },
      end: async () => {
        const replaced = joining.replaces;
        joining.replaces = undefined;
        joining.write = undefined;
        // Only the replaced session's key is done with: a repeat of the joined write may follow.
        if (this.#joins.get(keys[0]!) === joining) this.#joins.delete(keys[0]!);
        if (replaced === undefined) return;
        await this.#deadline(this.#redis.run('DEL', replaced), 'a session delete').catch(ignore);
        this.#cache.changed(replaced);
      },
    };
  }

  /**
   * A `set` of a session a join concerns: resolves true when the join answered it (handed it to
   * the joined write, or found it a repeat of what that write stored).
   */
  #joined(key: string, joining: Joining, session: SessionData, callback?: Callback): boolean {
    const write = joining.write;
    if (write === undefined) {
      if (joining.written === undefined || joining.written !== JSON.stringify(session))
        return false;
      joining.written = undefined;
      callback?.();
      return true;
    }
    joining.write = undefined;
    const value = JSON.stringify(session);
    const replaces = joining.replaces;
    joining.replaces = undefined;
    this.#cache.changed(key);
    if (replaces !== undefined) this.#cache.changed(replaces);
    write({ key, value, ttlSeconds: this.#ttlOf(session), replaces }).then(
      (written) => {
        if (written) joining.written = value;
        if (replaces !== undefined) this.#cache.changed(replaces);
        callback?.();
      },
      (error: unknown) => {
        // The replaced session may be there still: the join's end deletes it.
        joining.replaces = replaces;
        joining.error = error;
        callback?.(error);
      },
    );
    return true;
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
    let session: SessionData | null;
    try {
      session = json === null ? null : (JSON.parse(json) as SessionData);
    } catch (error) {
      callback(error);
      return;
    }
    callback(undefined, session);
  }
}
