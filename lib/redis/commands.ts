// The one Redis command seam of the package: what RedisTokenStore (and a session store) need of a
// Redis client, implemented once for ioredis 5/6 (ioredis-commands.ts) and once for node-redis 5/6
// (node-redis-commands.ts) on what both build alike, written here. Nothing above this folder knows
// which client it runs on.
import type { LuaScript } from './lua-script';
import { isServerReply } from './redis-errors';
import type { ReplicaLink } from './replica-lanes';
import type { ClusterLinks, TrackingLink } from './tracking-link';

/** An argument as Redis receives it. */
export type Argument = string | Buffer;

/**
 * What the store asks of Redis. Keys are named as the store names them: a client's own key prefix
 * (ioredis and node-redis 6 `keyPrefix`) is added by the client (or the seam) on the way out. Bulk
 * replies come back as strings. A seam hands each command, as one argument list starting with its
 * name, to `send` (`key` routes it on a Cluster); `addedPrefix` is what the seam puts before each
 * key itself (node-redis's sendCommand adds no `keyPrefix`; ioredis's call does, so its seam adds '').
 */
export abstract class RedisCommands {
  constructor(
    /** `'standalone'` (a plain client), `'sentinel'` (follows failovers) or `'cluster'`. */
    readonly topology: 'standalone' | 'sentinel' | 'cluster',
    /** The client's own key prefix (`''` when none): Redis names the keys with it in front. */
    readonly keyPrefix: string,
    private readonly addedPrefix: string,
    private readonly send: (key: string, args: Argument[]) => Promise<unknown>,
    protected readonly events: Emitter,
  ) {}

  /** One command on one key, its first argument; on a Cluster sent to the node owning the key. */
  run(command: string, key: string, args: readonly Argument[] = []): Promise<unknown> {
    return this.send(key, [command, this.addedPrefix + key, ...args]);
  }

  /** A Lua script by EVALSHA, sent again by EVAL when the server (or Cluster node) lacks it. */
  async script(
    script: LuaScript,
    keys: readonly string[],
    args: readonly Argument[],
  ): Promise<unknown> {
    const prefixed = keys.map((key) => this.addedPrefix + key);
    const send = (command: 'EVALSHA' | 'EVAL', body: string): Promise<unknown> =>
      this.send(keys[0] ?? '', [command, body, String(keys.length), ...prefixed, ...args]);
    try {
      return await send('EVALSHA', script.sha);
    } catch (error) {
      if (!isServerReply(error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return await send('EVAL', script.source);
    }
  }

  /** Calls `listener` once the client has ended for good (quit, close, disconnect). */
  onEnd(listener: () => void): () => void {
    const stop = listen(this.events, ['end'], () => {
      stop();
      listener();
    });
    return stop;
  }

  /**
   * Calls `listener` on the client's own signs that its server may have changed: a reconnect, a
   * Sentinel's switch to another master, a Cluster node failing (docs/durability.md).
   */
  abstract onServerChange(listener: () => void): () => void;
  /**
   * A connection of its own for key tracking (caching/key-tracking.ts), or a sentence saying why
   * this client cannot have one. Not on a Cluster, whose nodes each track their own keys.
   */
  abstract trackingLink(): TrackingLink | string;
  /** On a Cluster: its slot map and a tracking link per master (caching/cluster-key-tracking.ts). */
  abstract clusterLinks(): ClusterLinks | undefined;
  /** Connections of their own for WAIT, opened on first use, or a sentence saying why there are none. */
  abstract replicaLink(): ReplicaLink | string;
}

// The clients' own listener type (EventEmitter's): anything narrower is not assignable from it.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Listener = (...args: any[]) => void;

/** A client's (or a connection's) events, as EventEmitter has them. */
export interface Emitter {
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
}

/** Adds `listener` for each of `events`; returns what removes them all. */
export function listen(
  emitter: Emitter,
  events: readonly string[],
  listener: Listener,
): () => void {
  for (const event of events) emitter.on(event, listener);
  return () => {
    for (const event of events) emitter.off(event, listener);
  };
}
