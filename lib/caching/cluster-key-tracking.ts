// Key tracking on a Redis Cluster: a KeyTracking per master, following the client's slot map. Each
// node reports changes of its own keys only (CLIENT TRACKING is per node), so every master that
// serves slots gets its own tracking connection, heartbeat, lease and mark.
import { ignore } from '../util/ignore';
import type { RedisCommands } from '../redis/commands';
import { CLUSTER_SLOTS, keySlot } from '../redis/cluster-slots';
import type { ClusterLinks } from '../redis/tracking-link';
import { CLUSTER_FULL_CHECK_BEATS, CLUSTER_MARK_SEARCH_LIMIT, TRACKING_TIMING } from './bounds';
import {
  KeyTracking,
  MARK_SUFFIX,
  type KeyChangeListener,
  type KeyTracker,
  type UnavailableBy,
} from './key-tracking';
import { Lease } from './lease';

/** Key tracking for `prefix` on whatever `redis` is: one connection, or one per Cluster master. */
export function trackKeys(
  redis: RedisCommands,
  prefix: string,
  listener: KeyChangeListener,
): KeyTracker {
  const links = redis.clusterLinks();
  return links === undefined
    ? new KeyTracking(redis, prefix, listener)
    : new ClusterKeyTracking(redis, links, prefix, listener);
}

/**
 * The mark's name for each master: `<keyPrefix><prefix>~db{n}`, the first n whose slot that master
 * serves (the mark must be a key of the node it proves). A prefix with a hash tag of its own pins
 * every key of the prefix to one slot: then only that slot's master can hold any, and only it is
 * tracked.
 */
function markNames(owners: ReadonlyArray<string | undefined>, base: string): Map<string, string> {
  const wanted = new Set(owners.filter((owner): owner is string => owner !== undefined));
  const names = new Map<string, string>();
  const pinned = pinsOneSlot(base);
  for (let n = 0; n < CLUSTER_MARK_SEARCH_LIMIT && names.size < wanted.size; n += 1) {
    const name = `${base}{${n}}`;
    const owner = owners[keySlot(name)];
    if (owner !== undefined && !names.has(owner)) names.set(owner, name);
    if (pinned) break;
  }
  return names;
}

/** True when a hash tag in `base` (the prefix) puts every key under it in one slot. */
const pinsOneSlot = (base: string): boolean => keySlot(`${base}{0}`) === keySlot(`${base}{1}`);

interface MasterTracking {
  readonly tracking: KeyTracking;
  readonly mark: string;
  /** The end of its lease, as last renewed. */
  until: number;
}

/**
 * Live while every master of the client's slot map has a live KeyTracking, until the earliest end
 * of their leases; the map is read again on its topology events, when its version changes and every
 * second, and any change empties the caches (docs/caching.md, "On a Redis Cluster").
 */
export class ClusterKeyTracking implements KeyTracker {
  readonly #masters = new Map<string, MasterTracking>();
  readonly #unfollow: Array<() => void>;
  readonly #timer: NodeJS.Timeout;
  #owners: ReadonlyArray<string | undefined> = [];
  #version: unknown;
  #beats = 0;
  /** Masters serve slots that no tracked master covers (no mark found): never live then. */
  #uncovered = false;
  readonly #lease: Lease;
  #closed = false;

  constructor(
    private readonly redis: RedisCommands,
    private readonly links: ClusterLinks,
    private readonly prefix: string,
    private readonly listener: KeyChangeListener,
  ) {
    this.#lease = new Lease(listener);
    this.#unfollow = [redis.onEnd(() => void this.close()), links.onTopology(() => this.#follow())];
    this.#timer = setInterval(() => {
      this.#beats += 1;
      if (this.#beats % CLUSTER_FULL_CHECK_BEATS === 0 || links.mapVersion() !== this.#version)
        this.#follow();
    }, TRACKING_TIMING.heartbeatMs);
    this.#timer.unref();
    this.#follow();
  }

  get live(): boolean {
    return this.#lease.live;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    for (const unfollow of this.#unfollow) unfollow();
    this.#lease.end();
    const closing = [...this.#masters.values()].map(({ tracking }) => tracking.close());
    this.#masters.clear();
    await Promise.all(closing);
  }

  /** Reads the slot map; on a change, drops every copy and tracks the masters it names now. */
  #follow(): void {
    if (this.#closed) return;
    this.#version = this.links.mapVersion();
    const owners = Array.from({ length: CLUSTER_SLOTS }, (_, slot) => this.links.ownerOf(slot));
    const known = this.#owners;
    if (owners.length === known.length && owners.every((owner, slot) => owner === known[slot]))
      return;
    const first = this.#owners.length === 0;
    this.#owners = owners;
    if (!first) this.listener.allChanged();
    const base = this.redis.keyPrefix + this.prefix + MARK_SUFFIX;
    const marks = markNames(owners, base);
    for (const [address, master] of this.#masters) {
      if (marks.get(address) === master.mark) continue;
      this.#masters.delete(address);
      void master.tracking.close();
    }
    for (const [address, mark] of marks) {
      if (!this.#masters.has(address)) this.#track(address, mark);
    }
    // Every master serving slots has a mark (a pinned prefix needs only its slot's master).
    this.#uncovered =
      !pinsOneSlot(base) && owners.some((owner) => owner !== undefined && !marks.has(owner));
    this.#update();
  }

  #track(address: string, mark: string): void {
    const master: MasterTracking = {
      mark,
      until: 0,
      tracking: new KeyTracking(
        {
          keyPrefix: this.redis.keyPrefix,
          trackingLink: () => this.links.trackingLink(address),
          // The Cluster client's end closes every master's tracking (see the constructor).
          onEnd: () => ignore,
        },
        this.prefix,
        {
          changed: (key) => this.listener.changed(key),
          allChanged: () => this.listener.allChanged(),
          renewed: (until) => {
            master.until = until;
            if (this.#masters.get(address) === master) this.#update();
          },
          liveChanged: (live) => {
            if (this.#masters.get(address) !== master) return;
            this.#update();
            // A master's link lost may be a failover: the client's map may have moved on.
            if (!live) this.#follow();
          },
          unavailable: (reason, by) => this.#unavailable(reason, by),
        },
        mark,
      ),
    };
    this.#masters.set(address, master);
  }

  /** On until the earliest lease of the masters while every one is live, else off. */
  #update(): void {
    let until = this.#masters.size > 0 && !this.#uncovered ? Infinity : 0;
    for (const master of this.#masters.values())
      until = master.tracking.live ? Math.min(until, master.until) : 0;
    if (until > 0) this.#lease.renew(until);
    else this.#lease.end();
  }

  /** One master refused tracking (renamed CLIENT, an ACL): the others are of no use alone. */
  #unavailable(reason: string, by: UnavailableBy): void {
    if (this.#closed) return;
    void this.close();
    this.listener.unavailable?.(reason, by);
  }
}
