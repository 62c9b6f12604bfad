// The command seam on node-redis 5 and 6: `createClient`, `createCluster` and `createSentinel`.
// Public API only: sendCommand (with a type mapping per call), duplicate, isReady, options, events.
import { ignore } from '../util/ignore';
import { CommandSeam, isRefusal, keySlot, listen, ReplicaLanes, slotOwners } from './commands';
import type {
  Argument,
  ClusterLinks,
  Lane,
  Listener,
  TrackingLink,
  TrackingLinkEvents,
} from './commands';

/** node-redis's RESP type code of a bulk string (`RESP_TYPES.BLOB_STRING`, the same in 5 and 6). */
const BLOB_STRING = 36;
/** Per-call options: bulk strings as Buffers, or (an empty mapping) as strings whatever the client's own mapping. */
const AS = {
  bytes: { typeMapping: { [BLOB_STRING]: Buffer } },
  text: { typeMapping: {} },
} as const;
const AS_TEXT = AS.text;

interface Emitter {
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
}

/** A node-redis 5/6 client from `createClient()` (any modules, RESP version or type mapping). */
export interface NodeRedisClient extends Emitter {
  sendCommand(args: Argument[], options?: object): Promise<unknown>;
  duplicate(overrides?: object): NodeRedisClient;
  connect(): Promise<unknown>;
  destroy(): void;
  readonly isReady: boolean;
  readonly isOpen: boolean;
  /** node-redis 6 has a `keyPrefix` option; 5 has none. */
  readonly options?: object | undefined;
}

/** A node of node-redis's slot map (its `masters`, a shard's `master`). */
interface ClusterNode {
  readonly address: string;
}

/** A node-redis 5/6 Cluster from `createCluster()`. */
export interface NodeRedisCluster extends Emitter {
  sendCommand(
    firstKey: Argument | undefined,
    isReadonly: boolean | undefined,
    args: Argument[],
    options?: object,
  ): Promise<unknown>;
  getSlotMaster(slot: number): unknown;
  /** The slot map: per slot its shard, whose master has an address (`host:port`). */
  readonly slots: ReadonlyArray<{ master?: ClusterNode } | undefined>;
  /** The masters, for nodeClient(). */
  readonly masters: readonly ClusterNode[];
  /** The (connected) client of a node: a Promise in node-redis 6, a client or a Promise in 5. */
  nodeClient(node: ClusterNode): NodeRedisClient | Promise<NodeRedisClient>;
  /** node-redis 6 only; 5 has `isOpen` alone. */
  readonly isReady?: boolean;
  readonly isOpen: boolean;
}

/** A node-redis 5/6 Sentinel from `createSentinel()`. */
export interface NodeRedisSentinel extends Emitter {
  sendCommand(
    isReadonly: boolean | undefined,
    args: Argument[],
    options?: object,
  ): Promise<unknown>;
  getMasterNode(): unknown;
  /** node-redis 6 only. */
  duplicate?(overrides?: object): NodeRedisSentinel;
  /** node-redis 6: the client-side cache made from the `clientSideCache` option (an EventEmitter). */
  readonly clientSideCache?: Emitter | undefined;
  connect(): Promise<unknown>;
  destroy(): void;
  readonly isReady: boolean;
  readonly isOpen: boolean;
}

export type NodeRedisAny = NodeRedisClient | NodeRedisCluster | NodeRedisSentinel;

const isCluster = (client: NodeRedisAny): client is NodeRedisCluster =>
  typeof (client as NodeRedisCluster).getSlotMaster === 'function';
const isSentinel = (client: NodeRedisAny): client is NodeRedisSentinel =>
  typeof (client as NodeRedisSentinel).getMasterNode === 'function';

/** True for a node-redis client, Cluster or Sentinel. */
export const isNodeRedis = (client: object): client is NodeRedisAny =>
  typeof (client as { sendCommand?: unknown }).sendCommand === 'function' &&
  typeof (client as { isOpen?: unknown }).isOpen === 'boolean';

/** The client's own key prefix: node-redis 6's `keyPrefix` is added by its typed commands, not by sendCommand. */
const keyPrefixOf = (client: NodeRedisAny): string =>
  String((client as { options?: { keyPrefix?: Argument } }).options?.keyPrefix ?? '');

export class NodeRedisCommands extends CommandSeam {
  readonly library = 'node-redis';
  readonly #client: NodeRedisAny;

  constructor(client: NodeRedisAny) {
    const topology = isCluster(client) ? 'cluster' : isSentinel(client) ? 'sentinel' : 'standalone';
    const prefix = keyPrefixOf(client);
    // The prefix is added here, to the keys and the route of every command.
    super(
      topology,
      prefix,
      prefix,
      isCluster(client)
        ? (key, args, replies) => client.sendCommand(prefix + key, false, args, AS[replies])
        : isSentinel(client)
          ? // Never a replica (`isReadonly: false`): a read must see the write just made.
            (_key, args, replies) => client.sendCommand(false, args, AS[replies])
          : (_key, args, replies) => client.sendCommand(args, AS[replies]),
    );
    this.#client = client;
  }

  get takesCommands(): boolean {
    const client = this.#client;
    return client.isReady ?? (client as NodeRedisCluster).isOpen;
  }

  onEnd(listener: () => void): () => void {
    const client = this.#client;
    let called = false;
    const once = (): void => {
      if (called) return;
      called = true;
      client.off('end', once);
      listener();
    };
    client.on('end', once);
    return () => void client.off('end', once);
  }

  onServerChange(listener: () => void): () => void {
    const client = this.#client;
    const master = (event: { type?: string }): void => {
      if (event.type === 'MASTER' || event.type === 'MASTER_CHANGE') listener();
    };
    if (isCluster(client)) return listen(client, ['node-reconnecting', 'node-error'], listener);
    const ends = [
      listen(client, ['reconnecting'], listener),
      listen(client, ['client-error', 'topology-change'], master),
    ];
    return () => ends.forEach((end) => end());
  }

  trackingLink(): TrackingLink | string {
    const client = this.#client;
    if (isCluster(client))
      return 'a Cluster spreads keys over nodes that each track only their own keys';
    if (isSentinel(client)) {
      if (client.duplicate === undefined) {
        return "node-redis 5's Sentinel has no duplicate() for a connection of its own (node-redis 6 has)";
      }
      return new NodeRedisSentinelTrackingLink(client);
    }
    return new NodeRedisTrackingLink(() => client);
  }

  clusterLinks(): ClusterLinks | undefined {
    const client = this.#client;
    return isCluster(client) ? nodeRedisClusterLinks(client) : undefined;
  }

  replicaLink(): NodeRedisReplicaLink | string {
    const client = this.#client;
    if (isSentinel(client) && client.duplicate === undefined) {
      return "node-redis 5's Sentinel has no duplicate() for a connection of its own (node-redis 6 has)";
    }
    return new NodeRedisReplicaLink(client, this.keyPrefix);
  }
}

/**
 * Lanes that are duplicates of the client (a Sentinel's follows the failover itself; a Cluster's
 * has a connection per master and routes by the mark's key).
 */
class NodeRedisReplicaLink extends ReplicaLanes<NodeRedisAny> {
  routeOf(key: string): string {
    const master = this.#masterOf(key);
    return (master as { address?: string } | undefined)?.address ?? '';
  }

  protected role(markKey: string): Promise<unknown> {
    const client = this.client;
    const role = ['ROLE'];
    if (isCluster(client))
      return client.sendCommand(this.keyPrefix + markKey, false, role, AS_TEXT);
    if (isSentinel(client)) return client.sendCommand(false, role, AS_TEXT);
    return client.sendCommand(role, AS_TEXT);
  }

  /** On a Cluster, the master owning `key`'s slot (as the cluster's slot map has it now). */
  #masterOf(key: string): unknown {
    const client = this.client;
    return isCluster(client) ? client.getSlotMaster(keySlot(this.keyPrefix + key)) : undefined;
  }

  /**
   * A connection of its own to the master of `markKey`: a duplicate of the client (of the
   * cluster's client of that master on a Cluster; a Sentinel's follows the failover itself).
   */
  protected open(_route: string, markKey: string): Lane {
    const client = this.client;
    // No key prefix or per-command options of the app's: the mark's key is given whole.
    const overrides = { keyPrefix: undefined, commandOptions: undefined };
    let opening: Promise<Lane>;
    if (isSentinel(client)) {
      const sentinel = client.duplicate!();
      opening = connected(sentinel, (args) => sentinel.sendCommand(false, args, AS_TEXT));
    } else {
      const base = isCluster(client)
        ? Promise.resolve(client.nodeClient(this.#masterOf(markKey) as ClusterNode))
        : Promise.resolve(client as NodeRedisClient);
      opening = base.then((node) => {
        const single = node.duplicate(overrides);
        return connected(single, (args) => single.sendCommand(args, AS_TEXT));
      });
    }
    opening.catch(ignore);
    return {
      send: async (args) => (await opening).send(args),
      destroy: () => void opening.then((connection) => connection.destroy(), ignore),
    };
  }
}

/** Connects `duplicate`; resolves how to send on it and how to end it. */
async function connected(
  duplicate: { connect(): Promise<unknown>; destroy(): void; on: Emitter['on'] },
  send: Lane['send'],
): Promise<Lane> {
  duplicate.on('error', ignore);
  const destroy = (): void => {
    try {
      duplicate.destroy();
    } catch {
      // already closed
    }
  };
  try {
    await duplicate.connect();
  } catch (error) {
    destroy();
    throw error;
  }
  return { send, destroy };
}

/** How long a tracking link waits to look again for a Cluster master's client. */
const PARENT_RETRY_MS = 250;

/**
 * node-redis's Cluster, publicly: `slots` (per slot its shard and the shard's `master`), `masters`
 * and `nodeClient(master)` (the node's client, which the link duplicates: the Cluster's `defaults`,
 * its password and TLS, the node's address after `nodeAddressMap`). It has no event for a topology
 * change, but replaces `slots` with a new array on every rediscovery (after a MOVED, or a node
 * reconnecting), so the map's version is the array itself; its node events help.
 */
function nodeRedisClusterLinks(cluster: NodeRedisCluster): ClusterLinks {
  return {
    // None on a client that only says it is a Cluster (a wrapper): then no master, never live.
    slotOwners: () =>
      slotOwners(
        (slot) => (cluster.slots as NodeRedisCluster['slots'] | undefined)?.[slot]?.master?.address,
      ),
    mapVersion: () => cluster.slots,
    // Found again at every (re)connection: a rediscovery makes new node objects.
    trackingLink: (address) =>
      new NodeRedisTrackingLink(() => {
        const master = cluster.masters.find((node) => node.address === address);
        return master === undefined ? undefined : cluster.nodeClient(master);
      }),
    onTopology: (listener) =>
      listen(cluster, ['connect', 'node-connect', 'node-ready', 'node-disconnect'], listener),
  };
}

/**
 * A duplicate of the client speaking RESP3 with `emitInvalidate`: Redis pushes the reports on the
 * tracking connection itself (no redirect, no subscribed mode, so PING and CLIENT stay allowed),
 * and node-redis (5.x and 6.x) emits each reported key as an `invalidate` event. `parent`: the
 * client duplicated (a Cluster master's client, looked up when opening: while node-redis has none
 * for that address, or cannot connect it, the link waits and looks again).
 */
class NodeRedisTrackingLink implements TrackingLink {
  readonly #parent: () => NodeRedisClient | Promise<NodeRedisClient> | undefined;
  #connection: NodeRedisClient | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(parent: () => NodeRedisClient | Promise<NodeRedisClient> | undefined) {
    this.#parent = parent;
  }

  open(events: TrackingLinkEvents): void {
    const retry = (): void => {
      if (this.#closed) return;
      this.#retry = setTimeout(() => this.open(events), PARENT_RETRY_MS);
      this.#retry.unref();
    };
    let parent: NodeRedisClient | Promise<NodeRedisClient> | undefined;
    try {
      parent = this.#parent();
    } catch {
      parent = undefined;
    }
    if (parent === undefined) retry();
    else if (parent instanceof Promise) {
      parent.then((client) => this.#openOn(client, events), retry);
    } else this.#openOn(parent, events);
  }

  #openOn(parent: NodeRedisClient, events: TrackingLinkEvents): void {
    if (this.#closed) return;
    const connection = parent.duplicate({
      RESP: 3,
      emitInvalidate: true,
      // A client-side cache of the app's own would take the pushes before `invalidate` is emitted.
      clientSideCache: undefined,
      disableOfflineQueue: true,
      keyPrefix: undefined,
      commandOptions: undefined,
    });
    this.#connection = connection;
    connection.on('ready', () => events.ready());
    // node-redis emits 'error' for every failure, then reconnects by itself; node-redis 6 sends
    // CLIENT TRACKING ON while connecting, so a refused CLIENT shows here as a reply error.
    connection.on('error', (error: unknown) => {
      if (isRefusal(error)) events.refused(error instanceof Error ? error.message : String(error));
      else events.down();
    });
    connection.on('end', () => events.down());
    connection.on('invalidate', ((key: Buffer | string | null) =>
      events.invalidated(key === null ? null : [String(key)])) as Listener);
    connection.connect().catch(ignore);
  }

  async track(prefix: string): Promise<void> {
    const connection = this.#open();
    // node-redis 6 turned tracking on (default mode) while connecting; the mode changes only from off.
    await connection.sendCommand(['CLIENT', 'TRACKING', 'OFF']);
    await connection.sendCommand(['CLIENT', 'TRACKING', 'ON', 'BCAST', 'PREFIX', prefix]);
  }

  ping(): Promise<unknown> {
    return this.#open().sendCommand(['PING']);
  }

  send(args: readonly string[]): Promise<unknown> {
    return this.#open().sendCommand([...args], AS_TEXT);
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#connection?.destroy();
  }

  #open(): NodeRedisClient {
    if (this.#connection === undefined) throw new Error('The tracking link is not open.');
    return this.#connection;
  }
}

/** The `flags` of a CLIENT TRACKINGINFO reply (a RESP3 map: an object, or a flat array). */
function trackingFlags(reply: unknown): string[] {
  let flags: unknown;
  if (Array.isArray(reply)) {
    const at = reply.findIndex((item) => String(item) === 'flags');
    flags = at === -1 ? undefined : reply[at + 1];
  } else if (reply instanceof Map) flags = reply.get('flags');
  else if (typeof reply === 'object' && reply !== null)
    flags = (reply as { flags?: unknown }).flags;
  return Array.isArray(flags) ? flags.map(String) : [];
}

/**
 * node-redis 6's Sentinel: a Sentinel of its own (`duplicate()`: the same sentinels, master name,
 * password, TLS and `nodeAddressMap`), with one master connection (`masterPoolSize: 1`, so the
 * tracking commands, the heartbeat and the reports all travel on it) speaking RESP3 with a
 * `clientSideCache`. The Sentinel surfaces nothing else of its connections' pushes, but its
 * (public) `clientSideCache` emits `invalidate` for each reported key; that cache itself holds
 * nothing, as only its typed cacheable commands fill it and the link sends none. It follows the
 * master through a failover like the app's client (`reconnecting`, then `ready` on the new one).
 * The master connection reconnecting by itself turns tracking back to node-redis's default mode
 * (not BCAST) without a `ready`, so the heartbeat asks CLIENT TRACKINGINFO: no `bcast` flag, and
 * the link says it is down, then ready again to be set up.
 */
class NodeRedisSentinelTrackingLink implements TrackingLink {
  readonly #parent: NodeRedisSentinel;
  #sentinel: NodeRedisSentinel | undefined;
  #events: TrackingLinkEvents | undefined;

  constructor(parent: NodeRedisSentinel) {
    this.#parent = parent;
  }

  open(events: TrackingLinkEvents): void {
    this.#events = events;
    const sentinel = this.#parent.duplicate!({
      RESP: 3,
      clientSideCache: { maxEntries: 1 },
      masterPoolSize: 1,
      replicaPoolSize: 0,
      useReplicas: false,
      reserveClient: false,
      keyPrefix: undefined,
      commandOptions: undefined,
    });
    this.#sentinel = sentinel;
    sentinel.on('error', ignore);
    sentinel.on('ready', () => events.ready());
    sentinel.on('reconnecting', () => events.down());
    sentinel.on('end', () => events.down());
    // The master connection failed (node-redis reconnects it, or the Sentinel moves to a new master).
    sentinel.on('client-error', ((event: { type?: string }) => {
      if (event.type === 'MASTER') events.down();
    }) as Listener);
    sentinel.clientSideCache?.on('invalidate', ((key: Buffer | string | null) =>
      events.invalidated(key === null ? null : [String(key)])) as Listener);
    sentinel.connect().catch(ignore);
  }

  async track(prefix: string): Promise<void> {
    const sentinel = this.#open();
    // The client-side cache turned tracking on (default mode) while connecting.
    await sentinel.sendCommand(false, ['CLIENT', 'TRACKING', 'OFF']);
    await sentinel.sendCommand(false, ['CLIENT', 'TRACKING', 'ON', 'BCAST', 'PREFIX', prefix]);
  }

  async ping(): Promise<unknown> {
    const reply = await this.#open().sendCommand(false, ['CLIENT', 'TRACKINGINFO'], AS_TEXT);
    if (!trackingFlags(reply).includes('bcast')) {
      const events = this.#events;
      events?.down();
      setImmediate(() => events?.ready());
      throw new Error('The tracking connection reconnected without its tracking.');
    }
    return reply;
  }

  send(args: readonly string[]): Promise<unknown> {
    return this.#open().sendCommand(false, [...args], AS_TEXT);
  }

  close(): void {
    try {
      this.#sentinel?.destroy();
    } catch {
      // already closed
    }
  }

  #open(): NodeRedisSentinel {
    if (this.#sentinel === undefined) throw new Error('The tracking link is not open.');
    return this.#sentinel;
  }
}
