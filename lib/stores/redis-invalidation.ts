// The invalidation connection of RedisTokenStore's record cache: a connection of its own with
// CLIENT TRACKING (BCAST on the key prefix) redirected to itself and subscribed to
// `__redis__:invalidate`, set up again after every reconnect; the cache serves only while it is up.
import type { Redis, RedisOptions } from 'ioredis';
import type { RecordCache } from './record-cache';

/** Where RESP2 delivers the invalidation messages of a redirected tracking connection. */
const INVALIDATE_CHANNEL = '__redis__:invalidate';
/** How often the connection is pinged; a ping unanswered by the next one turns the cache off. */
const HEARTBEAT_MS = 1000;

/** Clients ending, by client: one 'end' listener per client however many stores share it. */
const followers = new WeakMap<Redis, Set<() => void>>();

function followEnd(client: Redis, onEnd: () => void): () => void {
  let listeners = followers.get(client);
  if (listeners === undefined) {
    const set = new Set<() => void>();
    listeners = set;
    followers.set(client, set);
    client.once('end', () => {
      followers.delete(client);
      for (const listener of set) listener();
    });
  }
  listeners.add(onEnd);
  return () => listeners.delete(onEnd);
}

/**
 * The server refused the command for good (renamed or forbidden, or a Redis before 6), as opposed
 * to a connection that went away or a server that is briefly busy.
 */
const isRefusal = (error: unknown): boolean =>
  error instanceof Error &&
  error.name === 'ReplyError' &&
  !/^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)/.test(error.message);

/**
 * Keeps `cache` coherent with Redis: on every (re)connection, `CLIENT ID`, `CLIENT TRACKING on
 * REDIRECT <own id> BCAST PREFIX <prefix>`, `SUBSCRIBE __redis__:invalidate`, then the cache is
 * switched on; it is switched off (and emptied) whenever the connection closes or stops answering.
 *
 * The connection speaks RESP2 on ioredis 6 too: ioredis 6 drops RESP3 `invalidate` push frames
 * (DataHandler.returnPush handles only pub/sub pushes), while redirected invalidations on a RESP2
 * subscriber connection reach its `messageBuffer` event on both versions.
 */
export class RedisInvalidation {
  readonly #connection: Redis;
  readonly #cache: RecordCache;
  /** What Redis names the store's keys by: the client's own `keyPrefix`, then the store's prefix. */
  readonly #prefix: string;
  /** The client's `keyPrefix`, taken off the keys Redis reports (the cache knows them without it). */
  readonly #keyPrefix: string;
  readonly #onRefused: (reason: string) => void;
  readonly #heartbeat: NodeJS.Timeout;
  readonly #unfollow: () => void;
  /** Counts set-ups, so that one overtaken by a reconnect does not switch the cache on. */
  #attempt = 0;
  #subscribed = false;
  #pingPending = false;
  #closed = false;

  constructor(
    client: Redis,
    cache: RecordCache,
    prefix: string,
    /** Told once, when the server refuses client tracking; the cache then stays off for good. */
    onRefused: (reason: string) => void,
  ) {
    this.#cache = cache;
    this.#keyPrefix = String((client.options as { keyPrefix?: string }).keyPrefix ?? '');
    this.#prefix = this.#keyPrefix + prefix;
    this.#onRefused = onRefused;
    // `protocol` and `replyMapping` are ioredis 6 options (its `replyMapping: 'resp3'` needs RESP3);
    // ioredis 5 speaks RESP2 and ignores them. Nothing is queued
    // or resent across a reconnect: CLIENT TRACKING must precede SUBSCRIBE on every connection.
    const overrides = {
      protocol: 2,
      replyMapping: 'legacy',
      autoResubscribe: false,
      autoResendUnfulfilledCommands: false,
      enableOfflineQueue: false,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      keyPrefix: '',
    } as RedisOptions;
    this.#connection = client.duplicate(overrides);
    const connection = this.#connection;
    // Errors surface as 'close' (cache off) and are retried by ioredis; none is the app's to handle.
    connection.on('error', () => undefined);
    connection.on('close', () => this.#down());
    connection.on('ready', () => void this.#track());
    connection.on('messageBuffer', (channel: Buffer | string, message: unknown) =>
      this.#onMessage(channel, message),
    );
    this.#heartbeat = setInterval(() => this.#beat(), HEARTBEAT_MS);
    this.#heartbeat.unref();
    this.#unfollow = followEnd(client, () => void this.close());
    connection.connect().catch(() => undefined);
  }

  /** Closes the connection; the cache stays off. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    this.#unfollow();
    this.#attempt += 1;
    this.#cache.setActive(false);
    this.#connection.disconnect();
  }

  async #track(): Promise<void> {
    const attempt = ++this.#attempt;
    const connection = this.#connection;
    try {
      const id = await connection.client('ID');
      await connection.call(
        'CLIENT',
        'TRACKING',
        'on',
        'REDIRECT',
        String(id),
        'BCAST',
        'PREFIX',
        this.#prefix,
      );
      await connection.subscribe(INVALIDATE_CHANNEL);
    } catch (error) {
      if (isRefusal(error) && attempt === this.#attempt && !this.#closed) {
        // Renamed or forbidden CLIENT (some managed services), or a Redis before 6: direct reads.
        void this.close();
        this.#onRefused(error instanceof Error ? error.message : String(error));
      }
      return;
    }
    if (attempt !== this.#attempt || this.#closed) return;
    this.#subscribed = true;
    this.#pingPending = false;
    this.#cache.setActive(true);
  }

  #down(): void {
    this.#attempt += 1;
    this.#subscribed = false;
    this.#cache.setActive(false);
  }

  #onMessage(channel: Buffer | string, message: unknown): void {
    if (String(channel) !== INVALIDATE_CHANNEL) return;
    if (message === null || message === undefined) {
      // FLUSHDB / FLUSHALL: every key may be gone.
      this.#cache.invalidateAll();
    } else if (Array.isArray(message)) {
      for (const key of message) this.#invalidate(String(key));
    } else {
      this.#invalidate(String(message));
    }
  }

  #invalidate(key: string): void {
    this.#cache.reported(key.startsWith(this.#keyPrefix) ? key.slice(this.#keyPrefix.length) : key);
  }

  /**
   * A connection that stops answering (a stalled server, a half-open socket) would also stop
   * carrying invalidations without closing: the cache is off until a ping gets through again.
   * Invalidations sent before that pong arrive before it, so serving can resume at once.
   */
  #beat(): void {
    if (!this.#subscribed || this.#closed) return;
    if (this.#pingPending) {
      if (this.#cache.active) this.#cache.setActive(false);
      return;
    }
    this.#pingPending = true;
    const attempt = this.#attempt;
    this.#connection.ping().then(
      () => {
        if (attempt !== this.#attempt || this.#closed) return;
        this.#pingPending = false;
        if (!this.#cache.active) this.#cache.setActive(true);
      },
      () => undefined,
    );
  }
}
