// The part of a tracking link both clients share: finding the client to duplicate, and waiting for
// it while there is none yet (a Cluster master the client has no connection to).
import type { TrackingLink, TrackingLinkEvents } from './commands';

/** How long a tracking link waits to look again for the client it duplicates. */
const PARENT_RETRY_MS = 250;

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
