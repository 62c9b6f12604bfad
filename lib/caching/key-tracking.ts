// Server-assisted client-side caching, the Redis half: tells a listener of every change Redis
// reports for keys under a prefix (CLIENT TRACKING, broadcast mode, on a connection of its own),
// and when those reports can be relied on. Any key prefix: the record cache and a session store
// each keep one.
import { randomBytes } from 'node:crypto';
import { ignore } from '../util/ignore';
import type { RedisCommands } from '../redis/commands';
import { isRefusal, isServerReply } from '../redis/redis-errors';
import type { TrackingLink } from '../redis/tracking-link';
import { TRACKING_TIMING } from './bounds';
import { Lease, type LeaseListener } from './lease';

/** What a KeyTracking tells besides its lease's transitions (lease.ts). No method may throw. */
export interface KeyChangeListener extends LeaseListener {
  /** `key` (without the client's key prefix) may have changed. */
  changed(key: string): void;
  /** Told once when keys cannot be tracked: never live (RedisTokenStoreEvents.recordCacheUnavailable). */
  unavailable?(reason: string, by: UnavailableBy): void;
}

/** Whose limit keeps keys from being tracked: Redis's (`refused`, `silent`) or the client's. */
export type UnavailableBy = 'refused' | 'silent' | 'client';

/** What tracks the keys of a prefix: one KeyTracking, or one per master on a Cluster. */
export interface KeyTracker {
  /** True while reports are reliable: copies may be served. */
  readonly live: boolean;
  /** Closes its connections; never live again. */
  close(): Promise<void>;
}

/** Where a KeyTracking gets its connection: the seam, or one master of a Cluster. */
export type TrackingSource = Pick<RedisCommands, 'keyPrefix' | 'trackingLink' | 'onEnd'>;

/** The database mark, under the tracked prefix (so that ACLs on the prefix cover it). */
export const MARK_SUFFIX = '~db';

/**
 * Keeps `listener` told of changes to keys starting with `prefix`; live only once tracking, the
 * database mark and a report of the mark's rewrite are set up on the connection, and while every
 * heartbeat is answered within the lease (docs/caching.md, "States").
 */
export class KeyTracking implements KeyTracker {
  /** The prefix as Redis names the keys (the client's own key prefix, then the tracked prefix). */
  readonly #trackedPrefix: string;
  readonly #heartbeat: NodeJS.Timeout | undefined;
  readonly #unfollow: () => void = ignore;
  #link: TrackingLink | undefined;
  /** Bumped whenever the connection changes state, so that a step overtaken by it stops. */
  #epoch = 0;
  #readyAt: number | undefined;
  #trackingOn = false;
  #settingUp = false;
  #nextSetUpAt = 0;
  #failedProofs = 0;
  #proofSeen: (() => void) | undefined;
  /** The mark's value in the database this process reads; undefined until set up. */
  #mark: string | undefined;
  #probe: { sentAt: number } | undefined;
  #lastAnswerAt = 0;
  readonly #lease: Lease;
  #closed = false;

  /**
   * `markName`: the mark's full name (as Redis names it), where it must be a key of one node (a
   * Cluster's master: see cluster-key-tracking.ts); by default `<keyPrefix><prefix>~db`.
   */
  constructor(
    private readonly redis: TrackingSource,
    prefix: string,
    private readonly listener: KeyChangeListener,
    private readonly markName: string = redis.keyPrefix + prefix + MARK_SUFFIX,
  ) {
    this.#lease = new Lease(listener);
    this.#trackedPrefix = redis.keyPrefix + prefix;
    const link = redis.trackingLink();
    if (typeof link === 'string') {
      this.#closed = true;
      // On the next tick, so that a listener attached right after construction hears it.
      process.nextTick(() => listener.unavailable?.(link, 'client'));
      return;
    }
    this.#unfollow = redis.onEnd(() => void this.close());
    this.#heartbeat = setInterval(() => this.#beat(), TRACKING_TIMING.heartbeatMs);
    this.#heartbeat.unref();
    this.#open(link);
  }

  get live(): boolean {
    return this.#lease.live;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    this.#unfollow();
    this.#down();
    this.#link?.close();
  }

  #open(link: TrackingLink): void {
    this.#link = link;
    link.open({
      ready: () => {
        if (this.#link !== link || this.#closed) return;
        this.#down();
        this.#readyAt = Date.now();
        void this.#setUp();
      },
      down: () => {
        if (this.#link === link) this.#down();
      },
      invalidated: (keys) => {
        if (this.#link === link) this.#reported(keys);
      },
      refused: (reason) => {
        if (this.#link === link && !this.#closed) this.#unavailable(reason, 'refused');
      },
    });
  }

  /** Drops the connection and makes a new one (a silent or stuck connection never recovers). */
  #reconnect(): void {
    const old = this.#link;
    const link = this.redis.trackingLink();
    if (typeof link === 'string') return;
    this.#down();
    old?.close();
    this.#open(link);
  }

  #down(): void {
    this.#epoch += 1;
    this.#readyAt = undefined;
    this.#trackingOn = false;
    this.#mark = undefined;
    this.#probe = undefined;
    this.#proofSeen = undefined;
    this.#lease.end();
  }

  async #setUp(): Promise<void> {
    const link = this.#link;
    if (link === undefined || this.#settingUp || this.#closed) return;
    const epoch = this.#epoch;
    this.#settingUp = true;
    try {
      if (!this.#trackingOn) {
        await link.track(this.#trackedPrefix);
        if (epoch !== this.#epoch) return;
        this.#trackingOn = true;
      }
      await this.#adoptMark(link, epoch);
    } catch (error) {
      if (epoch === this.#epoch && isRefusal(error)) {
        // Renamed or forbidden CLIENT (some managed services), or a Redis before 6.
        this.#unavailable(error instanceof Error ? error.message : String(error), 'refused');
      }
      // Anything else (a connection lost, Redis away): the heartbeat sets up again.
      this.#nextSetUpAt =
        Date.now() + TRACKING_TIMING.heartbeatMs * TRACKING_TIMING.setUpRetryBeats;
    } finally {
      this.#settingUp = false;
    }
  }

  /** Reads (or makes) the database mark, then proves the channel with a report of its rewrite. */
  async #adoptMark(link: TrackingLink, epoch: number): Promise<void> {
    let value = await this.#readMark(link);
    if (value === null) {
      await link.send(['SET', this.markName, randomBytes(12).toString('base64url'), 'NX']);
      value = await this.#readMark(link);
    }
    if (epoch !== this.#epoch || value === null) return;
    const sentAt = Date.now();
    const seen = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), TRACKING_TIMING.proofTimeoutMs);
      timer.unref();
      this.#proofSeen = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
    // The same value again (XX: never re-creates a mark a FLUSHDB just removed): one report.
    await link.send(['SET', this.markName, value, 'XX']);
    const proven = await seen;
    if (epoch !== this.#epoch) return;
    this.#proofSeen = undefined;
    if (!proven) {
      this.#failedProofs += 1;
      if (this.#failedProofs >= TRACKING_TIMING.proofAttempts) {
        this.#unavailable('Redis accepted CLIENT TRACKING but its reports do not arrive', 'silent');
      }
      return;
    }
    this.#failedProofs = 0;
    this.#mark = value;
    this.#lastAnswerAt = Date.now();
    this.#lease.renew(sentAt + TRACKING_TIMING.leaseMs);
  }

  /** The mark's value, `null` when none; MGET, so that INFO commandstats tells it from the store's GETs. */
  async #readMark(link: TrackingLink): Promise<string | null> {
    const [value] = (await link.send(['MGET', this.markName])) as unknown[];
    return value === null || value === undefined ? null : String(value);
  }

  #unavailable(reason: string, by: UnavailableBy): void {
    void this.close();
    this.listener.unavailable?.(reason, by);
  }

  #reported(keys: readonly string[] | null): void {
    if (keys === null) {
      this.listener.allChanged();
      return;
    }
    const ownPrefix = this.redis.keyPrefix;
    for (const name of keys) {
      if (name === this.markName) {
        this.#proofSeen?.();
        continue;
      }
      this.listener.changed(name.startsWith(ownPrefix) ? name.slice(ownPrefix.length) : name);
    }
  }

  #beat(): void {
    if (this.#closed || this.#readyAt === undefined) return;
    const now = Date.now();
    if (this.#mark === undefined) {
      // Not set up yet on this connection (Redis away, a proof not seen): try again, and make a
      // new connection if this one has been stuck for long.
      if (now - this.#readyAt > TRACKING_TIMING.reconnectAfterMs && !this.#settingUp) {
        this.#reconnect();
      } else if (now >= this.#nextSetUpAt) {
        void this.#setUp();
      }
      return;
    }
    if (this.#probe !== undefined) {
      // Given up after a while (an unanswered PING must not keep the cache off for good).
      if (now - this.#probe.sentAt < TRACKING_TIMING.probeTimeoutMs) return;
      this.#probe = undefined;
    }
    if (now - this.#lastAnswerAt > TRACKING_TIMING.reconnectAfterMs) {
      this.#reconnect();
      return;
    }
    this.#sendProbe(now);
  }

  #sendProbe(sentAt: number): void {
    const link = this.#link;
    if (link === undefined) return;
    const probe = { sentAt };
    const epoch = this.#epoch;
    this.#probe = probe;
    Promise.all([link.ping(), this.#readMark(link)]).then(
      ([, value]) => {
        if (this.#probe !== probe || epoch !== this.#epoch) return;
        this.#probe = undefined;
        this.#lastAnswerAt = Date.now();
        if (value !== this.#mark) {
          // Another database under the same index (SWAPDB), or the mark flushed or evicted.
          this.#setUpAgain();
          this.listener.allChanged();
          return;
        }
        // Every report sent before the PING has arrived: reliable until `sentAt` + the lease.
        this.#lease.renew(sentAt + TRACKING_TIMING.leaseMs);
      },
      (error: unknown) => {
        if (this.#probe !== probe || epoch !== this.#epoch) return;
        this.#probe = undefined;
        // A server's refusal of the mark's read (MOVED or ASK: a Cluster's slot moved away from
        // this node; LOADING: a restarted node) says the channel no longer covers what it did:
        // off now, not at the lease's end, and set up again.
        if (isServerReply(error)) this.#setUpAgain();
      },
    );
  }

  /** Off now, and set up again at the next heartbeat. */
  #setUpAgain(): void {
    this.#mark = undefined;
    this.#nextSetUpAt = 0;
    this.#lease.end();
  }
}
