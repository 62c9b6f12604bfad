// What RedisTokenStore does so that a Redis failover loses no login, behind one object
// (docs/durability.md): the writes a login depends on wait for a replica (replica-acks.ts) and are
// looked for where a failover may have come in between; a refreshed record or a deletion no replica
// holds yet is kept and done again (kept-writes.ts); and on a sign that the server changed (a
// command that failed on its connection, not a refusal; the client's own reconnects and Sentinel or
// Cluster switches; a server that answered as no master would) the failover state
// (failover-state.ts) refuses refresh locks for a while. A cache lease running out is none.
import type { Durability } from '../core/store-engine';
import type { StoredValue } from '../core/token-store';
import { checkSessionKey } from '../core/engine-arguments';
import { StoreUnavailableError } from '../errors';
import type { RedisCommands } from '../redis/commands';
import { isRefusal } from '../redis/redis-errors';
import type { ReplicaLink } from '../redis/replica-lanes';
import { FailoverState } from './failover-state';
import { KeptWrites, type KeptWritesDeps } from './kept-writes';
import {
  held,
  ReplicaAcks,
  type ReplicaWaitOutcome,
  type ReplicaWaitSettings,
} from './replica-acks';

export interface StoreDurabilityDeps extends Pick<
  KeptWritesDeps,
  'reassert' | 'redelete' | 'recordKey' | 'onReassert'
> {
  /** The client's seam, watched here for signs that the server changed. */
  redis: RedisCommands;
  link: ReplicaLink;
  settings: ReplicaWaitSettings;
  /** Where the writes beside `key` (a Redis key as the store names it) are confirmed: its slot. */
  markKey(key: string): string;
  /** The Redis key of a player's index (a deletion's writes are beside it). */
  playerKey(player: string): string;
  /** How long a deletion is kept to be done again: a record's longest life. */
  maxTtlMs: number;
  /**
   * Whether the server that answers now holds a write: the key present at `version` or later
   * (a record), present (`0`: any value), or absent (`null`).
   */
  holds(key: string, version: number | null): Promise<boolean>;
  /** Where express-session's `store` keeps session `sid`, when it is on the same client. */
  sessionRedisKey(store: unknown, sid: string): string | undefined;
  onWait(outcome: ReplicaWaitOutcome, durationMs: number): void;
}

export class StoreDurability {
  /** Every failed command of the store passes here (and is rethrown): it may be a sign. */
  readonly noticed: (error: unknown) => never;
  /** What the package's core asks of it (core/store-engine.ts). */
  readonly engine: Durability;
  readonly #acks: ReplicaAcks;
  readonly #state: FailoverState;
  readonly #kept: KeptWrites;
  readonly #unwatch: () => void;

  constructor(private readonly deps: StoreDurabilityDeps) {
    const acks = new ReplicaAcks(deps.link, deps.settings, deps.onWait);
    const state = new FailoverState(() => acks.replicated);
    const lost = (): void => state.lost();
    this.#acks = acks;
    this.#state = state;
    this.noticed = (error) => {
      if (!isRefusal(error)) lost();
      throw error;
    };
    this.#unwatch = deps.redis.onServerChange(lost);
    const kept = new KeptWrites({
      ...deps,
      confirm: (key, version) => this.#confirm(key, version),
      lost,
    });
    this.#kept = kept;
    this.engine = {
      confirm: async (sessionKey, session) => {
        checkSessionKey(sessionKey);
        const sessionRedisKey = session && deps.sessionRedisKey(session.store, session.sid);
        const outcomes = await Promise.all([
          this.#confirm(deps.recordKey(sessionKey), 1),
          sessionRedisKey === undefined ? 'no-replica' : this.#confirm(sessionRedisKey, 0),
        ]);
        if (outcomes.includes('failed')) {
          throw new StoreUnavailableError(
            'Redis went away before a replica acknowledged the new login; the player must enter again.',
          );
        }
      },
      settled: (sessionKey) => kept.settled(sessionKey),
      loggedOut: async (sessionKeys, player) => {
        const waits = sessionKeys.map((key) => kept.recordDeleted(key, deps.maxTtlMs));
        // None deleted (asked again): the writes beside the player's index alone.
        if (waits.length === 0 && player !== undefined)
          waits.push(acks.confirm(deps.markKey(deps.playerKey(player))));
        if (!(await Promise.all(waits)).every(held)) {
          throw new StoreUnavailableError(
            'No replica acknowledged the logout in time; it is done again until one does, and may be asked again.',
          );
        }
      },
      get unsettled() {
        return state.phase !== 'steady';
      },
    };
  }

  /** True while refresh locks are refused: a failover may be under way (windows.ts, SETTLE_MS). */
  get settling(): boolean {
    return this.#state.phase === 'settling';
  }

  /** A record's value as read, or what this process keeps newer than it (KeptWrites.overlay). */
  overlay(sessionKey: string, stored: StoredValue | undefined): StoredValue | undefined {
    return this.#kept.overlay(sessionKey, stored);
  }

  /**
   * A refresh's write of `record` over version `expected`, made by `write`: resolves once written
   * (the wait for a replica runs on; `engine.settled` tells its end). When `expected` is a record
   * kept here, the write chains onto it, over the oldest version it replaced.
   */
  async refreshed(
    sessionKey: string,
    record: StoredValue,
    expected: number,
    ttlMs: number,
    write: () => Promise<boolean>,
  ): Promise<boolean> {
    const kept = this.#kept;
    const { replaced, chained } = kept.writeOver(sessionKey, expected);
    let written: boolean;
    try {
      written = chained
        ? (await this.deps.reassert(sessionKey, record, replaced, ttlMs)) !== 0
        : await write();
    } catch (error) {
      // The write may or may not have landed: kept, and written again over `replaced` only.
      await kept.recordWritten(sessionKey, record, replaced, ttlMs, true);
      throw error;
    }
    if (written) void kept.recordWritten(sessionKey, record, replaced, ttlMs);
    return written;
  }

  close(): void {
    this.#unwatch();
    this.#kept.close();
    this.deps.link.close();
  }

  /**
   * Waits for a replica to hold the write of `key` (see StoreDurabilityDeps.holds for `version`),
   * then, wherever a failover may have come in between, looks for it on the server that answers
   * now: a wait answered by a promoted replica that lacks it is `failed`.
   */
  async #confirm(key: string, version: number | null): Promise<ReplicaWaitOutcome> {
    const deps = this.deps;
    const outcome = await this.#acks.confirm(deps.markKey(key));
    const followsFailovers = deps.redis.topology !== 'standalone';
    // A timeout too: a lane opened after a failover waits on the promoted replica.
    const look = outcome === 'acknowledged' || (outcome !== 'failed' && followsFailovers);
    if (look && !(await deps.holds(key, version).catch(() => false))) {
      this.#state.lost();
      return 'failed';
    }
    if (outcome === 'failed') this.#state.lost();
    return outcome;
  }
}
