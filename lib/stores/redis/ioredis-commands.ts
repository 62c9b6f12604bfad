// The command seam on ioredis 5 and 6: `new Redis(…)`, `new Redis({ sentinels, … })` and
// `new Cluster(…)`. Public API only: call/callBuffer, duplicate, status, options, events.
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { ignore } from '../../util/ignore';
import type { LuaScript } from '../scripts';
import {
  isNoScript,
  type Argument,
  type RedisCommands,
  type Replies,
  type TrackingLink,
  type TrackingLinkEvents,
} from './commands';

/** Where RESP2 delivers the reports of a tracking connection redirected to itself. */
const INVALIDATE_CHANNEL = '__redis__:invalidate';

/** An ioredis 5/6 client: `Redis` (standalone or Sentinel) or `Cluster`. */
export type IoRedisClient = Redis | Cluster;

/** True for an ioredis client (both have `callBuffer`, which node-redis lacks). */
export const isIoRedis = (client: object): client is IoRedisClient =>
  typeof (client as { callBuffer?: unknown }).callBuffer === 'function' &&
  typeof (client as { isCluster?: unknown }).isCluster === 'boolean';

export class IoRedisCommands implements RedisCommands {
  readonly library = 'ioredis';
  readonly topology: RedisCommands['topology'];
  readonly keyPrefix: string;
  readonly #client: IoRedisClient;

  constructor(client: IoRedisClient) {
    this.#client = client;
    if (client.isCluster) {
      const cluster = client as Cluster;
      this.topology = 'cluster';
      this.keyPrefix = String(
        cluster.options.keyPrefix ?? cluster.options.redisOptions?.keyPrefix ?? '',
      );
    } else {
      const options = (client as Redis).options;
      this.topology = (options.sentinels?.length ?? 0) > 0 ? 'sentinel' : 'standalone';
      this.keyPrefix = String(options.keyPrefix ?? '');
    }
  }

  get takesCommands(): boolean {
    return this.#client.status === 'ready';
  }

  // ioredis adds its `keyPrefix` to the keys of `call` itself (it knows each command's key positions).
  run(
    command: string,
    key: string,
    args: readonly Argument[] = [],
    replies: Replies = 'text',
  ): Promise<unknown> {
    const client = this.#client;
    return replies === 'bytes'
      ? client.callBuffer(command, key, ...args)
      : client.call(command, key, ...args);
  }

  async script(
    script: LuaScript,
    keys: readonly string[],
    args: readonly Argument[],
    replies: Replies = 'text',
  ): Promise<unknown> {
    const client = this.#client;
    const send = (command: 'EVALSHA' | 'EVAL', body: string): Promise<unknown> =>
      replies === 'bytes'
        ? client.callBuffer(command, body, keys.length, ...keys, ...args)
        : client.call(command, body, keys.length, ...keys, ...args);
    try {
      return await send('EVALSHA', script.sha);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return await send('EVAL', script.source);
    }
  }

  onEnd(listener: () => void): () => void {
    const client = this.#client;
    client.once('end', listener);
    return () => void client.off('end', listener);
  }

  trackingLink(): TrackingLink | string {
    if (this.#client.isCluster) {
      return 'a Cluster spreads keys over nodes that each track only their own keys';
    }
    return new IoRedisTrackingLink(this.#client as Redis);
  }
}

/**
 * A duplicate of the client speaking RESP2, tracking redirected to itself and subscribed to
 * `__redis__:invalidate`: ioredis 6 drops RESP3 `invalidate` push frames (its data handler passes
 * on only pub/sub pushes), while redirected reports reach the documented `messageBuffer` event on
 * both versions (`message` would flatten a list of keys into one string).
 */
class IoRedisTrackingLink implements TrackingLink {
  readonly #parent: Redis;
  #connection: Redis | undefined;

  constructor(parent: Redis) {
    this.#parent = parent;
  }

  open(events: TrackingLinkEvents): void {
    // `protocol` and `replyMapping` are ioredis 6 options; ioredis 5 speaks RESP2 and ignores them.
    // Nothing is queued or resent across a reconnect: tracking must precede SUBSCRIBE every time.
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
    const connection = this.#parent.duplicate(overrides);
    this.#connection = connection;
    // Errors surface as 'close' and ioredis reconnects; none is the app's to handle.
    connection.on('error', ignore);
    connection.on('close', () => events.down());
    connection.on('ready', () => events.ready());
    connection.on('messageBuffer', (channel: Buffer | string, message: unknown) => {
      if (String(channel) !== INVALIDATE_CHANNEL) return;
      if (message === null || message === undefined) events.invalidated(null);
      else if (Array.isArray(message)) events.invalidated(message.map(String));
      else events.invalidated([String(message)]);
    });
    connection.connect().catch(ignore);
  }

  async track(prefix: string): Promise<void> {
    const connection = this.#open();
    const id = await connection.call('CLIENT', 'ID');
    await connection.call(
      'CLIENT',
      'TRACKING',
      'on',
      'REDIRECT',
      String(id),
      'BCAST',
      'PREFIX',
      prefix,
    );
    await connection.subscribe(INVALIDATE_CHANNEL);
  }

  ping(): Promise<unknown> {
    return this.#open().ping();
  }

  close(): void {
    this.#connection?.disconnect();
  }

  #open(): Redis {
    if (this.#connection === undefined) throw new Error('The tracking link is not open.');
    return this.#connection;
  }
}
