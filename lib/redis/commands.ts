// The one Redis command seam of the package: what RedisTokenStore (and a session store) need of a
// Redis client, implemented once for ioredis 5/6 (ioredis-commands.ts) and once for node-redis 5/6
// (node-redis-commands.ts), on what both build alike (CommandSeam, ReplicaLanes, listen), written
// here once. Nothing above this folder knows which client it runs on.
import { ignore } from '../util/ignore';
import type { LuaScript } from './lua-script';

/** An argument as Redis receives it. */
export type Argument = string | Buffer;

/**
 * What the store asks of Redis. Keys are named as the store names them: a client's own key prefix
 * (ioredis and node-redis 6 `keyPrefix`) is added by the client (or the adapter) on the way out.
 * Bulk replies come back as strings.
 */
export interface RedisCommands {
  /** `'standalone'` (a plain client), `'sentinel'` (follows failovers) or `'cluster'`. */
  readonly topology: 'standalone' | 'sentinel' | 'cluster';
  /** The client's own key prefix (`''` when none): Redis names the keys with it in front. */
  readonly keyPrefix: string;
  /**
   * One command on one key, the key being the command's first argument (GET, SET, DEL, PEXPIRE,
   * ZRANGE, …); on a Cluster it goes to the node owning the key.
   */
  run(command: string, key: string, args?: readonly Argument[]): Promise<unknown>;
  /** A Lua script by EVALSHA, sent again by EVAL when the server (or Cluster node) lacks it. */
  script(script: LuaScript, keys: readonly string[], args: readonly Argument[]): Promise<unknown>;
  /** Calls `listener` once the client has ended for good (quit, close, disconnect). */
  onEnd(listener: () => void): () => void;
  /**
   * Calls `listener` on the client's own signs that its server may have changed: a reconnect, a
   * Sentinel's switch to another master, a Cluster node failing (docs/durability.md).
   */
  onServerChange(listener: () => void): () => void;
  /**
   * A connection of its own for key tracking (caching/key-tracking.ts), or a sentence saying why
   * this client cannot have one. Not on a Cluster, whose nodes each track their own keys (clusterLinks()).
   */
  trackingLink(): TrackingLink | string;
  /** On a Cluster: its slot map and a tracking link per master (caching/cluster-key-tracking.ts). */
  clusterLinks(): ClusterLinks | undefined;
  /**
   * Connections of their own for WAIT, opened on first use (see ReplicaLink), or a sentence saying
   * why this client cannot have them.
   */
  replicaLink(): ReplicaLink | string;
}

/**
 * What both seams build the same way: a command or a script as one argument list, handed to the
 * seam's `send` (which sends one command, `args` starting with its name; `key`, as the store names
 * it, routes it on a Cluster), and the client's `end`. `addedPrefix`: what the seam puts before
 * each key itself (node-redis's sendCommand adds no `keyPrefix`; ioredis's call does, so its seam
 * adds '').
 */
export abstract class CommandSeam {
  constructor(
    readonly topology: RedisCommands['topology'],
    readonly keyPrefix: string,
    private readonly addedPrefix: string,
    private readonly send: (key: string, args: Argument[]) => Promise<unknown>,
    protected readonly events: Emitter,
  ) {}

  run(command: string, key: string, args: readonly Argument[] = []): Promise<unknown> {
    return this.send(key, [command, this.addedPrefix + key, ...args]);
  }

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

  onEnd(listener: () => void): () => void {
    const stop = listen(this.events, ['end'], () => {
      stop();
      listener();
    });
    return stop;
  }
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

/**
 * Connections of their own for WAIT, which blocks the connection it runs on: no command of the app
 * queues behind a replica's acknowledgement. WAIT counts the writes of its own connection, so a
 * round first writes a mark (beside the key, on the same master): the replication stream is one
 * ordered log, and a replica that acknowledged the mark holds every write the master took before it.
 */
export interface ReplicaLink {
  /** The master a key's writes go to: '' off a Cluster, else the master's address. */
  routeOf(key: string): string;
  /**
   * The replicas connected to the master owning `markKey` (ROLE, on the app's own connection: no
   * connection is opened where there is no replica). Rejects when the server is no master.
   */
  replicas(markKey: string): Promise<number>;
  /**
   * On connection `lane` (0, 1, …) to the master owning `markKey`: `SET markKey` (expiring after
   * markTtlMs) and `WAIT replicas timeoutMs`; resolves the replicas that acknowledged. Rejects when
   * the connection fails or the server is no master (a failover under way).
   */
  confirm(
    lane: number,
    markKey: string,
    replicas: number,
    timeoutMs: number,
    markTtlMs: number,
  ): Promise<number>;
  /** Closes every connection it opened. */
  close(): void;
}

/** A connection of a replica lane. */
export interface Lane {
  send(args: Argument[]): Promise<unknown>;
  destroy(): void;
}

/**
 * A ReplicaLink on either client: a lane per master and number, opened by the seam on first use
 * and dropped after a failure, so the next round finds the master anew.
 */
export abstract class ReplicaLanes<Client> implements ReplicaLink {
  /** By master (its address on a Cluster, '' elsewhere) and lane. */
  readonly #lanes = new Map<string, Promise<Lane>>();
  /** Closed by the store: a round that was asking ROLE then must not open a lane nobody closes. */
  #closed = false;

  /**
   * `keyPrefix`: the client's, which the lanes (opened without it) put before the mark's key;
   * `ownerOf`: on a Cluster, the master of a slot (ClusterLinks).
   */
  constructor(
    protected readonly client: Client,
    protected readonly keyPrefix: string,
    private readonly ownerOf?: ClusterLinks['ownerOf'],
  ) {}

  routeOf(key: string): string {
    return this.ownerOf?.(keySlot(this.keyPrefix + key)) ?? '';
  }

  /** The ROLE reply of the master owning `markKey`, on the app's own connection. */
  protected abstract role(markKey: string): Promise<unknown>;
  /** A connection of its own, without the key prefix, to the master of `route`. */
  protected abstract open(route: string): Promise<Lane>;

  async replicas(markKey: string): Promise<number> {
    const reply = await this.role(markKey);
    // `['master', offset, [[ip, port, offset], …]]`
    if (!Array.isArray(reply) || String(reply[0]) !== 'master') {
      throw new Error('The server is not a master (a failover may be under way).');
    }
    return Array.isArray(reply[2]) ? reply[2].length : 0;
  }

  async confirm(
    lane: number,
    markKey: string,
    replicas: number,
    timeoutMs: number,
    markTtlMs: number,
  ): Promise<number> {
    const route = this.routeOf(markKey);
    const name = `${route}#${lane}`;
    if (this.#closed) throw new Error('The store is closed.');
    try {
      const opening = this.#lanes.get(name) ?? this.open(route);
      this.#lanes.set(name, opening);
      const connection = await opening;
      const [, acknowledged] = await Promise.all([
        connection.send(['SET', this.keyPrefix + markKey, '1', 'PX', String(markTtlMs)]),
        connection.send(['WAIT', String(replicas), String(timeoutMs)]),
      ]);
      return Number(acknowledged);
    } catch (error) {
      this.#drop(name);
      throw error;
    }
  }

  close(): void {
    this.#closed = true;
    for (const name of [...this.#lanes.keys()]) this.#drop(name);
  }

  #drop(name: string): void {
    this.#lanes.get(name)?.then((connection) => connection.destroy(), ignore);
    this.#lanes.delete(name);
  }
}

/** The part of `key` Redis Cluster hashes: its hash tag when it has one, else all of it. */
export function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** CRC16 (XMODEM) of Redis Cluster's key slots, over the key's hash tag when it has one. */
export function keySlot(key: string): number {
  const hashed = hashTag(key);
  let crc = 0;
  for (const byte of Buffer.from(hashed, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc % CLUSTER_SLOTS;
}

/** Redis Cluster's number of hash slots. */
export const CLUSTER_SLOTS = 16_384;

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

/**
 * A Cluster client's public view of its masters, for key tracking per master: each node reports
 * changes of its own keys only, so every master that serves slots gets a tracking link.
 */
export interface ClusterLinks {
  /**
   * The address of the master serving `slot` (`undefined` where none), as the client's slot map
   * says now: the client routes by this map, so it names every node that answers the store's reads.
   */
  ownerOf(slot: number): string | undefined;
  /**
   * Something that is a different object whenever the client rebuilt its slot map (node-redis
   * replaces it on every rediscovery), compared at each heartbeat: cheap, so polled often.
   */
  mapVersion(): unknown;
  /** A tracking link to the master at `address` (an ownerOf()), or why there is none. */
  trackingLink(address: string): TrackingLink | string;
  /** Calls `listener` on the client's own events that may follow a topology change. */
  onTopology(listener: () => void): () => void;
}

/**
 * True when `error` is of a class named one of `names` (the clients' own error classes: neither
 * client is a dependency to import them from, and node-redis's set no `name`).
 */
export function isOfClass(error: unknown, names: readonly string[]): error is Error {
  if (!(error instanceof Error)) return false;
  for (let proto: unknown = error; proto !== null; proto = Object.getPrototypeOf(proto)) {
    if (names.includes((proto as { constructor?: { name?: string } }).constructor?.name ?? ''))
      return true;
  }
  return false;
}

/** A reply of the server (ioredis's ReplyError, node-redis's ErrorReply), not a client failure. */
export const isServerReply = (error: unknown): error is Error =>
  isOfClass(error, ['ReplyError', 'ErrorReply']);

/**
 * The server refused the command for good (renamed or forbidden, or a Redis before 6), as opposed
 * to a connection that went away or a server that is briefly busy.
 */
export const isRefusal = (error: unknown): boolean =>
  isServerReply(error) &&
  // MOVED and ASK: a Cluster's slot moved under a command sent straight to a node (key tracking).
  !/^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY|NOSCRIPT|MOVED|ASK)/.test(
    error.message,
  );
