// The command seam on node-redis 5 and 6: `createClient`, `createCluster` and `createSentinel`.
// Public API only: sendCommand (with a type mapping per call), duplicate, options, events.
import { ignore } from '../util/ignore';
import { listen, RedisCommands, type Argument, type Emitter, type Listener } from './commands';
import { isRefusal } from './redis-errors';
import { ReplicaLanes, type Lane } from './replica-lanes';
import {
  TrackingLinkOn,
  type ClusterLinks,
  type TrackingConnection,
  type TrackingLink,
  type TrackingLinkEvents,
} from './tracking-link';

/**
 * Per-call options: bulk strings as strings (an empty type mapping replaces the client's own: a
 * per-call mapping is spread over the client's command options, in a client and a Sentinel alike).
 */
const AS_TEXT = { typeMapping: {} } as const;

/** A node-redis 5/6 client from `createClient()` (any modules, RESP version or type mapping). */
export interface NodeRedisClient extends Emitter {
  sendCommand(args: Argument[], options?: object): Promise<unknown>;
  duplicate(overrides?: object): NodeRedisClient;
  connect(): Promise<unknown>;
  destroy(): void;
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

/**
 * How a command goes out on `client`, `prefix` added to its keys: on a Cluster to the master of
 * `key`; on a Sentinel never to a replica (a read must see the write just made).
 */
const senderOf = (
  client: NodeRedisAny,
  prefix: string,
): ((key: string, args: Argument[]) => Promise<unknown>) =>
  isCluster(client)
    ? (key, args) => client.sendCommand(prefix + key, false, args, AS_TEXT)
    : isSentinel(client)
      ? (_key, args) => client.sendCommand(false, args, AS_TEXT)
      : (_key, args) => client.sendCommand(args, AS_TEXT);

const NO_SENTINEL_DUPLICATE =
  "node-redis 5's Sentinel has no duplicate() for a connection of its own (node-redis 6 has)";

export class NodeRedisCommands extends RedisCommands {
  constructor(private readonly client: NodeRedisAny) {
    const topology = isCluster(client) ? 'cluster' : isSentinel(client) ? 'sentinel' : 'standalone';
    const prefix = keyPrefixOf(client);
    // The prefix is added here, to the keys and the route of every command.
    super(topology, prefix, prefix, senderOf(client, prefix), client);
  }

  onServerChange(listener: () => void): () => void {
    const client = this.client;
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
    const client = this.client;
    if (!isSentinel(client)) return clientTrackingLink(() => client as NodeRedisClient);
    return client.duplicate === undefined ? NO_SENTINEL_DUPLICATE : sentinelTrackingLink(client);
  }

  clusterLinks(): ClusterLinks | undefined {
    const client = this.client;
    return isCluster(client) ? nodeRedisClusterLinks(client) : undefined;
  }

  replicaLink(): NodeRedisReplicaLink | string {
    const client = this.client;
    if (isSentinel(client) && client.duplicate === undefined) return NO_SENTINEL_DUPLICATE;
    return new NodeRedisReplicaLink(client, this.keyPrefix, this.clusterLinks()?.ownerOf);
  }
}

/** Lanes that are duplicates of the client (of the master's node client on a Cluster). */
class NodeRedisReplicaLink extends ReplicaLanes<NodeRedisAny> {
  protected role(markKey: string): Promise<unknown> {
    return senderOf(this.client, this.keyPrefix)(markKey, ['ROLE']);
  }

  /** A Sentinel's duplicate follows the failover itself. */
  protected async open(route: string): Promise<Lane> {
    const client = this.client;
    if (isSentinel(client)) {
      const sentinel = client.duplicate!();
      return connected(sentinel, (args) => sentinel.sendCommand(false, args, AS_TEXT));
    }
    const node = isCluster(client)
      ? await client.nodeClient(client.masters.find((master) => master.address === route)!)
      : client;
    // No key prefix or per-command options of the app's: the mark's key is given whole.
    const single = node.duplicate({ keyPrefix: undefined, commandOptions: undefined });
    return connected(single, (args) => single.sendCommand(args, AS_TEXT));
  }
}

/** Connects `duplicate`; resolves how to send on it and how to end it. */
async function connected(
  duplicate: { connect(): Promise<unknown>; destroy(): void; on: Emitter['on'] },
  send: Lane['send'],
): Promise<Lane> {
  duplicate.on('error', ignore);
  const destroy = (): void => destroyQuietly(duplicate);
  await duplicate.connect().catch((error: unknown) => {
    destroy();
    throw error;
  });
  return { send, destroy };
}

/** Ends `connection` whether or not it is still open (node-redis 5 throws on a closed one). */
function destroyQuietly(connection: { destroy(): void }): void {
  try {
    connection.destroy();
  } catch {
    // already closed
  }
}

/**
 * node-redis's Cluster, publicly: `slots`, `masters` and `nodeClient(master)` (the node's client,
 * which a link duplicates). No event tells of a topology change, but every rediscovery replaces
 * `slots` with a new array: the map's version is the array itself.
 */
function nodeRedisClusterLinks(cluster: NodeRedisCluster): ClusterLinks {
  return {
    ownerOf: (slot) => cluster.slots[slot]?.master?.address,
    mapVersion: () => cluster.slots,
    trackingLink: (address) =>
      clientTrackingLink(() => {
        const master = cluster.masters.find((node) => node.address === address);
        return master === undefined ? undefined : cluster.nodeClient(master);
      }),
    onTopology: (listener) =>
      listen(cluster, ['connect', 'node-connect', 'node-ready', 'node-disconnect'], listener),
  };
}

/** Tells `events` of each key a node-redis connection reports (`null`: every key). */
const reportsTo =
  (events: TrackingLinkEvents): Listener =>
  (key: Buffer | string | null) =>
    events.invalidated(key === null ? null : [String(key)]);

/**
 * Tracking in BCAST mode for `prefix`, sent by `send`: connecting turned it on in the default mode
 * (node-redis 6, a client-side cache), which changes only from off.
 */
const bcast =
  (send: TrackingConnection['send']) =>
  async (prefix: string): Promise<void> => {
    await send(['CLIENT', 'TRACKING', 'OFF']);
    await send(['CLIENT', 'TRACKING', 'ON', 'BCAST', 'PREFIX', prefix]);
  };

/**
 * A duplicate of the client speaking RESP3 with `emitInvalidate`: Redis pushes the reports on the
 * connection itself (so PING and CLIENT stay allowed), emitted as `invalidate` events. `parent`: the
 * client duplicated (a Cluster master's client, looked up when opening).
 */
const clientTrackingLink = (
  parent: () => NodeRedisClient | Promise<NodeRedisClient> | undefined,
): TrackingLink =>
  new TrackingLinkOn(parent, (client, events) => {
    const connection = client.duplicate({
      RESP: 3,
      emitInvalidate: true,
      // A client-side cache of the app's own would take the pushes before `invalidate` is emitted.
      clientSideCache: undefined,
      disableOfflineQueue: true,
      keyPrefix: undefined,
      commandOptions: undefined,
    });
    connection.on('ready', () => events.ready());
    // node-redis emits 'error' for every failure, then reconnects by itself; node-redis 6 sends
    // CLIENT TRACKING ON while connecting, so a refused CLIENT shows here as a reply error.
    connection.on('error', (error: unknown) => {
      if (isRefusal(error)) events.refused(error instanceof Error ? error.message : String(error));
      else events.down();
    });
    connection.on('end', () => events.down());
    connection.on('invalidate', reportsTo(events));
    connection.connect().catch(ignore);
    const send = (args: readonly string[]): Promise<unknown> =>
      connection.sendCommand([...args], AS_TEXT);
    const close = (): void => destroyQuietly(connection);
    return { send, track: bcast(send), ping: () => send(['PING']), close };
  });

/**
 * node-redis 6's Sentinel: a Sentinel of its own (`duplicate()`), one RESP3 master connection whose
 * (public) `clientSideCache` emits `invalidate` for each reported key, the only pushes a Sentinel
 * surfaces (docs/caching.md, "Sentinel"). Its master connection reconnecting by itself comes back
 * in the default tracking mode without a `ready`: hence a heartbeat that checks the mode.
 */
const sentinelTrackingLink = (parent: NodeRedisSentinel): TrackingLink =>
  new TrackingLinkOn(
    () => parent,
    (client, events) => {
      const sentinel = client.duplicate!({
        RESP: 3,
        clientSideCache: { maxEntries: 1 },
        masterPoolSize: 1,
        replicaPoolSize: 0,
        useReplicas: false,
        reserveClient: false,
        keyPrefix: undefined,
        commandOptions: undefined,
      });
      sentinel.on('error', ignore);
      sentinel.on('ready', () => events.ready());
      sentinel.on('reconnecting', () => events.down());
      sentinel.on('end', () => events.down());
      // The master connection failed (node-redis reconnects it, or the Sentinel finds a new master).
      sentinel.on('client-error', ((event: { type?: string }) => {
        if (event.type === 'MASTER') events.down();
      }) as Listener);
      sentinel.clientSideCache?.on('invalidate', reportsTo(events));
      sentinel.connect().catch(ignore);
      const send = (args: readonly string[]): Promise<unknown> =>
        sentinel.sendCommand(false, [...args], AS_TEXT);
      // The heartbeat: a RESP3 map, as an object (no type mapping); its `flags` a set, as an array.
      const ping = async (): Promise<unknown> => {
        const reply = await send(['CLIENT', 'TRACKINGINFO']);
        if (!((reply as { flags?: unknown[] }).flags ?? []).map(String).includes('bcast')) {
          events.down();
          setImmediate(() => events.ready());
          throw new Error('The tracking connection reconnected without its tracking.');
        }
        return reply;
      };
      return { send, track: bcast(send), ping, close: () => destroyQuietly(sentinel) };
    },
  );
