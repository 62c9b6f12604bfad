// Connections of their own for WAIT on either client: the rounds' protocol (a mark, then WAIT) and
// the lanes per master, written once; each seam opens a lane its own way.
import { ignore } from '../util/ignore';
import { keySlot } from './cluster-slots';
import type { ClusterLinks } from './tracking-link';

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
   * markTtlMs) and `WAIT replicas timeoutMs`, asking `sending()` as they are sent (once the lane is
   * open): `false`, the round is over and nothing is sent (resolves 0), so no WAIT of a round nobody
   * awaits blocks the lane. Resolves the replicas that acknowledged. Rejects when the connection
   * fails or the server is no master (a failover under way).
   */
  confirm(
    lane: number,
    markKey: string,
    replicas: number,
    timeoutMs: number,
    markTtlMs: number,
    sending: () => boolean,
  ): Promise<number>;
  /** Closes every connection it opened. */
  close(): void;
}

/** A connection of a replica lane. */
export interface Lane {
  send(args: (string | Buffer)[]): Promise<unknown>;
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
    sending: () => boolean,
  ): Promise<number> {
    const route = this.routeOf(markKey);
    const name = `${route}#${lane}`;
    if (this.#closed) throw new Error('The store is closed.');
    try {
      const opening = this.#lanes.get(name) ?? this.open(route);
      this.#lanes.set(name, opening);
      const connection = await opening;
      if (!sending()) return 0;
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
