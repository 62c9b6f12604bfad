// An express-session store on Redis that serves sessions from this process's memory, kept coherent
// by Redis client tracking as the token record cache is, and renews a session's TTL only once part
// of its lifetime has passed: a logged-in request then sends no Redis command at all. Keys and
// values are connect-redis's (`sess:<id>`, the session as JSON), so a rolling deploy can switch.
import { Store, type SessionData } from 'express-session';
import type { Redis } from 'ioredis';
import type { RecordCache } from '../stores/record-cache';
import { RedisInvalidation } from '../stores/redis-invalidation';
import { parseOptions } from '../util/parse-options';
import { SessionCache } from './session-cache';
import { isIoredis, sessionCommandsOf, type SessionCommands } from './session-commands';
import {
  redisSessionStoreOptionsSchema,
  type RedisSessionStoreOptions,
} from './session-store-options';

type Callback<T = void> = (error?: unknown, value?: T) => void;

export class RedisSessionStore extends Store {
  readonly #commands: SessionCommands;
  readonly #prefix: string;
  readonly #ttlSeconds: number;
  /** A cached session whose key has less than this share of its TTL left is renewed. */
  readonly #renewBelow: number;
  readonly #cache: SessionCache;
  readonly #invalidation: RedisInvalidation | undefined;

  constructor(options: RedisSessionStoreOptions) {
    super();
    const config = parseOptions(redisSessionStoreOptionsSchema, options, 'RedisSessionStore');
    this.#commands = sessionCommandsOf(config.redis);
    this.#prefix = config.prefix;
    this.#ttlSeconds = config.ttlSeconds;
    this.#renewBelow = 1 - config.renewAfter;
    this.#cache = new SessionCache(config.maxCachedSessions);
    // The tracking connection exists for ioredis today (lib/stores/redis-invalidation.ts); on
    // node-redis, and on a Cluster, the cache stays off and every request reads Redis, as
    // connect-redis does. It takes the cache through the InvalidationSink half of RecordCache.
    const client = config.redis;
    if (
      config.maxCachedSessions > 0 &&
      isIoredis(client) &&
      (client as { isCluster?: boolean }).isCluster !== true
    ) {
      const onRefused = (reason: string): void => {
        this.emit('cacheUnavailable', { reason });
      };
      this.#invalidation = new RedisInvalidation(
        client as Redis,
        this.#cache as unknown as RecordCache,
        this.#prefix,
        onRefused,
      );
    }
  }

  /** True while sessions are served from memory (the invalidation channel is up). */
  get serving(): boolean {
    return this.#cache.active;
  }

  /** Sessions held in memory now. */
  get cachedSessions(): number {
    return this.#cache.size;
  }

  /** Closes the tracking connection (the client itself is the app's). */
  async close(): Promise<void> {
    await this.#invalidation?.close();
  }

  override get(sid: string, callback: Callback<SessionData | null>): void {
    const key = this.#prefix + sid;
    const now = Date.now();
    const cached = this.#cache.active ? this.#cache.lookup(key, now) : undefined;
    if (cached !== undefined) {
      this.#answer(callback, cached.json);
      return;
    }
    const ticket = this.#cache.beginRead(key);
    this.#commands.read(key).then(
      ({ json, pttlMs }) => {
        this.#cache.endRead(ticket, json, pttlMs, now);
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
        ? this.#commands.write(key, JSON.stringify(session), ttl)
        : this.#commands.remove(key);
    done.then(
      () => callback?.(),
      (error: unknown) => callback?.(error),
    );
  }

  /**
   * Renews the key's TTL only when less than `1 - renewAfter` of it is left (known from the cached
   * entry); without an entry (cache off, or just changed), renews as connect-redis does.
   */
  override touch(sid: string, session: SessionData, callback?: Callback): void {
    const key = this.#prefix + sid;
    const ttl = this.#ttlOf(session);
    const now = Date.now();
    const cached = this.#cache.active ? this.#cache.lookup(key, now) : undefined;
    // ttl <= 0 (a cookie already expired): EXPIRE deletes the key, as connect-redis's touch does.
    if (ttl > 0 && cached !== undefined && cached.expiresAt - now > ttl * 1000 * this.#renewBelow) {
      callback?.();
      return;
    }
    this.#commands.renew(key, ttl).then(
      () => {
        this.#cache.extend(key, now + ttl * 1000);
        callback?.();
      },
      (error: unknown) => callback?.(error),
    );
  }

  override destroy(sid: string, callback?: Callback): void {
    const key = this.#prefix + sid;
    this.#cache.reported(key);
    this.#commands.remove(key).then(
      () => callback?.(),
      (error: unknown) => callback?.(error),
    );
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
