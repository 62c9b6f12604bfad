// The one Redis command seam of the package: what RedisTokenStore (and a session store) need of a
// Redis client, implemented once for ioredis 5/6 (ioredis-commands.ts) and once for node-redis 5/6
// (node-redis-commands.ts). Nothing above this folder knows which client it runs on.
import type { LuaScript } from '../scripts';

/** How bulk replies come back: strings, or Buffers (a sealed record is binary). */
export type Replies = 'text' | 'bytes';

/** An argument as Redis receives it. */
export type Argument = string | Buffer;

/**
 * What the store asks of Redis. Keys are named as the store names them: a client's own key prefix
 * (ioredis and node-redis 6 `keyPrefix`) is added by the client (or the adapter) on the way out.
 */
export interface RedisCommands {
  /** Which library the client comes from, for messages. */
  readonly library: 'ioredis' | 'node-redis';
  /** `'standalone'` (a plain client), `'sentinel'` (follows failovers) or `'cluster'`. */
  readonly topology: 'standalone' | 'sentinel' | 'cluster';
  /** The client's own key prefix (`''` when none): Redis names the keys with it in front. */
  readonly keyPrefix: string;
  /** True while the client is connected and ready (a command sent now goes out now). */
  readonly takesCommands: boolean;
  /**
   * One command on one key, the key being the command's first argument (GET, SET, DEL, PEXPIRE,
   * ZRANGE, …); on a Cluster it goes to the node owning the key.
   */
  run(
    command: string,
    key: string,
    args?: readonly Argument[],
    replies?: Replies,
  ): Promise<unknown>;
  /** A Lua script by EVALSHA, sent again by EVAL when the server (or Cluster node) lacks it. */
  script(
    script: LuaScript,
    keys: readonly string[],
    args: readonly Argument[],
    replies?: Replies,
  ): Promise<unknown>;
  /** Calls `listener` once the client has ended for good (quit, close, disconnect). */
  onEnd(listener: () => void): () => void;
  /**
   * A connection of its own for key tracking (see key-tracking.ts), or a sentence saying why this
   * client cannot have one (a Cluster: each node tracks only its own keys).
   */
  trackingLink(): TrackingLink | string;
}

/** Events of a tracking link. */
export interface TrackingLinkEvents {
  /** The connection is (again) ready for `track()`; any earlier tracking is gone. */
  ready(): void;
  /** The connection closed or failed; it reconnects by itself. */
  down(): void;
  /** Redis reported keys (named as Redis names them) changed; `null`: every key (FLUSHDB/ALL). */
  invalidated(keys: readonly string[] | null): void;
  /** The server refused what the connection needs on connecting (a client that asks for tracking itself). */
  refused(reason: string): void;
}

/** A connection Redis reports key changes to (CLIENT TRACKING in broadcast mode). */
export interface TrackingLink {
  /** Connects, and reconnects after every loss until closed. */
  open(events: TrackingLinkEvents): void;
  /** On a ready connection: reports every change of a key starting with `prefix` (full name). */
  track(prefix: string): Promise<void>;
  /** A round trip on the connection reports arrive on: answered after every report sent before it. */
  ping(): Promise<unknown>;
  /**
   * A command of the tracking itself (the database mark) on a connection of the link, never on the
   * app's client: written after the app's QUIT, it would break the socket under that QUIT. Keys
   * are given as Redis names them.
   */
  send(args: readonly string[]): Promise<unknown>;
  /** Closes the connection for good. */
  close(): void;
}

/** A reply of the server (as opposed to a connection or client failure), on either client. */
export function isServerReply(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  // ioredis: ReplyError (from redis-errors); node-redis: ErrorReply and its subclasses.
  for (
    let proto = Object.getPrototypeOf(error);
    proto !== null;
    proto = Object.getPrototypeOf(proto)
  ) {
    const name = (proto as { constructor?: { name?: string } }).constructor?.name;
    if (name === 'ReplyError' || name === 'ErrorReply') return true;
  }
  return error.name === 'ReplyError';
}

export const isNoScript = (error: unknown): boolean =>
  isServerReply(error) && error.message.startsWith('NOSCRIPT');

/**
 * The server refused the command for good (renamed or forbidden, or a Redis before 6), as opposed
 * to a connection that went away or a server that is briefly busy.
 */
export const isRefusal = (error: unknown): boolean =>
  isServerReply(error) &&
  !/^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY|NOSCRIPT)/.test(error.message);
