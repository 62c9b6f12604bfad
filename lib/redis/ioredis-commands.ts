// The command seam on ioredis 5 and 6: `new Redis(…)`, `new Redis({ sentinels, … })` and
// `new Cluster(…)`. Public API only: call, duplicate, options, slots, nodes(), events.
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { ignore } from '../util/ignore';
import { listen, RedisCommands, type Emitter } from './commands';
import { ReplicaLanes, type Lane } from './replica-lanes';
import { TrackingLinkOn, type ClusterLinks, type TrackingLink } from './tracking-link';

/** Where RESP2 delivers the reports of a tracking connection redirected to itself. */
const INVALIDATE_CHANNEL = '__redis__:invalidate';

/**
 * An ioredis 5/6 client: `new Redis(…)` (standalone, or Sentinel with `sentinels`) or
 * `new Cluster(…)`. Written as the members the seam uses, so that the published types do not need
 * ioredis installed (a studio on node-redis has none).
 */
export interface IoRedisClient extends Emitter {
  readonly isCluster: boolean;
  readonly options: object;
  call(command: string, ...args: Array<string | Buffer | number>): Promise<unknown>;
  callBuffer(command: string, ...args: Array<string | Buffer | number>): Promise<unknown>;
}

/** True for an ioredis client (both have `callBuffer`, which node-redis lacks). */
export const isIoRedis = (client: object): client is IoRedisClient =>
  typeof (client as { callBuffer?: unknown }).callBuffer === 'function' &&
  typeof (client as { isCluster?: unknown }).isCluster === 'boolean';

/** The client's topology and key prefix, from its options. */
function topologyOf(client: IoRedisClient): [RedisCommands['topology'], string] {
  if (client.isCluster) {
    const { options } = client as unknown as Cluster;
    return ['cluster', String(options.keyPrefix ?? options.redisOptions?.keyPrefix ?? '')];
  }
  const { options } = client as unknown as Redis;
  const sentinel = (options.sentinels?.length ?? 0) > 0;
  return [sentinel ? 'sentinel' : 'standalone', String(options.keyPrefix ?? '')];
}

// ioredis adds its `keyPrefix` to the keys of `call` itself (it knows each command's key positions).
export class IoRedisCommands extends RedisCommands {
  constructor(private readonly client: IoRedisClient) {
    super(
      ...topologyOf(client),
      '',
      (_key, [command, ...args]) => client.call(String(command), ...args),
      client,
    );
  }

  onServerChange(listener: () => void): () => void {
    const events = this.client.isCluster ? ['node error', '-node'] : ['reconnecting'];
    return listen(this.events, events, listener);
  }

  trackingLink(): TrackingLink {
    return ioRedisTrackingLink(() => this.client as unknown as Redis);
  }

  clusterLinks(): ClusterLinks | undefined {
    return this.client.isCluster
      ? ioRedisClusterLinks(this.client as unknown as Cluster)
      : undefined;
  }

  replicaLink(): IoRedisReplicaLink {
    return new IoRedisReplicaLink(this.client, this.keyPrefix, this.clusterLinks()?.ownerOf);
  }
}

/** The Cluster's connection to the master at `address`, as its slot map names it (after `natMap`). */
const masterAt = (cluster: Cluster, address: string): Redis | undefined =>
  cluster.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === address);

/**
 * ioredis's Cluster, publicly: `slots` (an address list per slot, master first), `nodes('master')`
 * (which a link duplicates) and its `+node`, `-node` and `refresh` events. It changes `slots` in
 * place on MOVED, then refreshes it and emits `refresh`.
 */
function ioRedisClusterLinks(cluster: Cluster): ClusterLinks {
  return {
    ownerOf: (slot) => cluster.slots[slot]?.[0],
    mapVersion: () => cluster.slots,
    trackingLink: (address) => ioRedisTrackingLink(() => masterAt(cluster, address)),
    onTopology: (listener) => listen(cluster, ['+node', '-node', 'refresh'], listener),
  };
}

/** Lanes that are duplicates of the client (of the master node's client on a Cluster). */
class IoRedisReplicaLink extends ReplicaLanes<IoRedisClient> {
  protected role(markKey: string): Promise<unknown> {
    return this.#master(this.routeOf(markKey)).call('ROLE');
  }

  /** The app's own connection to the master of `route`. */
  #master(route: string): Redis {
    const master = this.client.isCluster
      ? masterAt(this.client as unknown as Cluster, route)
      : (this.client as unknown as Redis);
    if (master === undefined) throw new Error('No connection to the master of this key.');
    return master;
  }

  protected async open(route: string): Promise<Lane> {
    const connection = this.#master(route).duplicate({
      keyPrefix: '',
      // The store's own deadline bounds a round; the client's would cut a WAIT short.
      commandTimeout: undefined,
      maxRetriesPerRequest: 1,
      autoResendUnfulfilledCommands: false,
    } as RedisOptions);
    connection.on('error', ignore);
    return {
      send: ([command, ...args]) => connection.call(String(command), ...args),
      destroy: () => connection.disconnect(),
    };
  }
}

/**
 * Two duplicates of the client speaking RESP2: one takes the commands (CLIENT TRACKING redirected
 * to the other), the other is subscribed to `__redis__:invalidate`, where Redis sends a redirected
 * report: ioredis 6 drops RESP3 `invalidate` pushes, and a RESP2 subscriber may send nothing but
 * (UN)SUBSCRIBE and PING (docs/caching.md, "The tracking link on each client"). `parent`: the
 * client duplicated (a Cluster master's connection, looked up when opening).
 */
const ioRedisTrackingLink = (parent: () => Redis | undefined): TrackingLink =>
  new TrackingLinkOn(parent, (client, events) => {
    // `protocol` and `replyMapping` are ioredis 6 options; ioredis 5 speaks RESP2 and ignores them.
    // Nothing is queued or resent across a reconnect: the tracking is set up again every time.
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
    const commands = client.duplicate(overrides);
    const reports = client.duplicate(overrides);
    /** The subscriber's CLIENT ID once it is subscribed on its current connection. */
    let subscriberId: string | undefined;
    for (const connection of [commands, reports]) {
      // Errors surface as 'close' and ioredis reconnects; none is the app's to handle.
      connection.on('error', ignore);
      connection.on('close', () => events.down());
      // Ready for tracking once both are: a reconnect of either means setting it up again.
      connection.on('ready', () => {
        events.down();
        if (commands.status === 'ready' && reports.status === 'ready') events.ready();
      });
      connection.connect().catch(ignore);
    }
    reports.on('close', () => (subscriberId = undefined));
    // Redis sends the keys as a list, and a null for FLUSHDB/FLUSHALL (all keys).
    reports.on('messageBuffer', (channel: Buffer | string, message: unknown) => {
      if (String(channel) === INVALIDATE_CHANNEL)
        events.invalidated(Array.isArray(message) ? message.map(String) : null);
    });
    const send = ([command, ...args]: readonly string[]): Promise<unknown> =>
      commands.call(command!, ...args);
    return {
      async track(prefix) {
        // A subscriber that stayed up while the other connection came back keeps its subscription
        // (and may send nothing but (UN)SUBSCRIBE and PING any more).
        if (subscriberId === undefined) {
          const id = String(await reports.call('CLIENT', 'ID'));
          await reports.subscribe(INVALIDATE_CHANNEL);
          subscriberId = id;
        }
        const id = subscriberId;
        // Off first: a connection that stayed up may still redirect to a subscriber that did not.
        await send(['CLIENT', 'TRACKING', 'off']);
        await send(['CLIENT', 'TRACKING', 'on', 'REDIRECT', id, 'BCAST', 'PREFIX', prefix]);
      },
      ping: () => reports.ping(),
      send,
      close: () => {
        commands.disconnect();
        reports.disconnect();
      },
    };
  });
