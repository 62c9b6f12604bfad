// A tracking link (a connection Redis reports key changes to), and the part of one both clients
// share: finding the client to duplicate, and waiting for it while there is none yet (a Cluster
// master the client has no connection to).

/** How long a tracking link waits to look again for the client it duplicates. */
const PARENT_RETRY_MS = 250;

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

/** What a tracking link runs on once made: its connection(s) and what it sends on them. */
export type TrackingConnection = Omit<TrackingLink, 'open'>;

/**
 * A TrackingLink on what `make` builds from the client `parent()` gives, looked up again at each
 * opening (a node a Cluster dropped and made again is another object).
 */
export class TrackingLinkOn<Parent> implements TrackingLink {
  #connection: TrackingConnection | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly parent: () => Parent | Promise<Parent> | undefined,
    private readonly make: (parent: Parent, events: TrackingLinkEvents) => TrackingConnection,
  ) {}

  open(events: TrackingLinkEvents): void {
    const later = (): void => {
      if (this.#closed) return;
      this.#retry = setTimeout(() => this.open(events), PARENT_RETRY_MS);
      this.#retry.unref();
    };
    Promise.resolve()
      .then(this.parent)
      .then((parent) => {
        if (parent === undefined) later();
        else if (!this.#closed) this.#connection = this.make(parent, events);
      })
      .catch(later);
  }

  track(prefix: string): Promise<void> {
    return this.#made().track(prefix);
  }

  ping(): Promise<unknown> {
    return this.#made().ping();
  }

  send(args: readonly string[]): Promise<unknown> {
    return this.#made().send(args);
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#connection?.close();
  }

  #made(): TrackingConnection {
    if (this.#connection === undefined) throw new Error('The tracking link is not open.');
    return this.#connection;
  }
}
