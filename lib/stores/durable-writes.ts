// What RedisTokenStore does so that a failover loses no login (DESIGN section 13): the writes a
// login depends on wait for a replica (replica-acks.ts) and are looked for where a failover may
// have come in between; a refreshed record is served to this process from its write until a
// replica holds it, and when its wait fails or times out it is written again until one does, over
// the versions it replaced only; and for a while after the server was lost, no refresh lock is handed
// out, so no process spends the refresh token the platform has just retired before its owner has
// written the new one back.
import type { TokenRecord } from '../core/token-record';
import type { RecordRead } from '../core/store-engine';
import { ignore } from '../util/ignore';
import type { ReplicaAcks, ReplicaWaitOutcome } from './replica-acks';
import { isRefusal, type RedisCommands } from './redis/commands';

/** After the server was lost, refresh locks are refused this long: the owners re-assert first. */
export const SETTLE_MS = 3000;
/** After the server was lost, a refused refresh token re-reads the record for this long. */
export const UNSETTLED_MS = 15_000;
/** How often writes waiting for a new primary are tried again. */
const RETRY_MS = 100;

/** How a write kept for the new primary ended. */
export type ReassertOutcome = 'written' | 'present' | 'superseded';

/** A write kept in memory until a replica holds it. */
type Pending =
  | {
      kind: 'record';
      record: TokenRecord;
      replaced: number;
      ttlMs: number;
      expiresAt: number;
      /** Its first wait for a replica is still running: served here, not written again yet. */
      waiting: boolean;
    }
  | { kind: 'delete'; expiresAt: number };

export interface DurableWritesDeps {
  acks: ReplicaAcks;
  /**
   * Writes the record over any version from `replaced` up to its own (REASSERT_RECORD): 1
   * written, 2 there, 0 superseded.
   */
  reassert(
    sessionKey: string,
    record: TokenRecord,
    replaced: number,
    ttlMs: number,
  ): Promise<number>;
  /** Deletes the record again. */
  redelete(sessionKey: string): Promise<unknown>;
  /** Where the writes beside `key` (a Redis key as the store names it) are confirmed: its slot. */
  markKey(key: string): string;
  /** The Redis key of the session's record. */
  recordKey(sessionKey: string): string;
  /**
   * Whether the server that answers now holds a write: the key present at `version` or later
   * (a record), present (`0`: any value), or absent (`null`).
   */
  holds(key: string, version: number | null): Promise<boolean>;
  /**
   * The client follows failovers (Sentinel, Cluster): "no replica" may be the answer of a
   * promoted replica that lacks the write, so the write is looked for.
   */
  followsFailovers: boolean;
  onReassert(outcome: ReassertOutcome): void;
}

export class DurableWrites {
  readonly #deps: DurableWritesDeps;
  readonly #pending = new Map<string, Pending>();
  /** The running waits for a replica of refreshed records, by session. */
  readonly #waits = new Map<string, Promise<void>>();
  #retry: NodeJS.Timeout | undefined;
  #lostAt = Number.NEGATIVE_INFINITY;

  constructor(deps: DurableWritesDeps) {
    this.#deps = deps;
  }

  /** The server went away or answered as no master would: a failover may be under way. */
  lost(): void {
    this.#lostAt = Date.now();
  }

  /** True while refresh locks are refused (see SETTLE_MS). */
  get settling(): boolean {
    return Date.now() - this.#lostAt < SETTLE_MS;
  }

  /** True while a refused refresh token may be a failover's doing (see UNSETTLED_MS). */
  get unsettled(): boolean {
    return Date.now() - this.#lostAt < UNSETTLED_MS;
  }

  /**
   * Waits for a replica to hold the write of `key` (see {@link DurableWritesDeps.holds} for
   * `version`), then, wherever a failover may have come in between, looks for it on the server
   * that answers now: a wait answered by a promoted replica that lacks it is `failed`.
   */
  async confirm(key: string, version: number | null): Promise<ReplicaWaitOutcome> {
    const deps = this.#deps;
    const outcome = await deps.acks.confirm(deps.markKey(key));
    const look = outcome === 'acknowledged' || (outcome === 'no-replica' && deps.followsFailovers);
    if (look && !(await deps.holds(key, version).catch(() => false))) {
      this.lost();
      return 'failed';
    }
    if (outcome === 'failed') this.lost();
    return outcome;
  }

  /**
   * A new login's record and session (`sessionRedisKey`, when the session store is on this Redis):
   * resolves the worse outcome of the two.
   */
  async loginWritten(
    sessionKey: string,
    sessionRedisKey: string | undefined,
  ): Promise<ReplicaWaitOutcome> {
    const outcomes = await Promise.all([
      this.confirm(this.#deps.recordKey(sessionKey), 1),
      sessionRedisKey === undefined ? 'no-replica' : this.confirm(sessionRedisKey, 0),
    ]);
    return outcomes.includes('failed') ? 'failed' : outcomes[0];
  }

  /**
   * The version a refresh of `expected` is written over: `expected` itself, or, when `expected` is
   * a record kept here (refreshed again before the new primary had it), the oldest version that
   * record replaced; `chained` then says to write it with {@link reassertNow}.
   */
  writeOver(sessionKey: string, expected: number): { replaced: number; chained: boolean } {
    const kept = this.#pending.get(sessionKey);
    return kept?.kind === 'record' && kept.record.version === expected
      ? { replaced: kept.replaced, chained: true }
      : { replaced: expected, chained: false };
  }

  /** Writes `record` over any version from `replaced` up to its own, now: 1 written, 2 there, 0 not. */
  reassertNow(
    sessionKey: string,
    record: TokenRecord,
    replaced: number,
    ttlMs: number,
  ): Promise<number> {
    return this.#deps.reassert(sessionKey, record, replaced, ttlMs);
  }

  /**
   * A refreshed record was written over `replaced` (or its write failed on the way): served to
   * this process's reads until a replica holds it, and kept to be written again on a new primary
   * when its wait fails or times out. Resolves when that is decided; {@link settled} tells the same
   * to whoever needs the record durable, while requests with a usable token go on without it.
   */
  recordWritten(
    sessionKey: string,
    record: TokenRecord,
    replaced: number,
    ttlMs: number,
    writeFailed = false,
  ): Promise<void> {
    const pending = {
      kind: 'record' as const,
      record,
      replaced,
      ttlMs,
      expiresAt: Date.now() + ttlMs,
      waiting: true,
    };
    this.#pending.set(sessionKey, pending);
    const wait = this.#settle(sessionKey, pending, writeFailed).finally(() => {
      if (this.#waits.get(sessionKey) === wait) this.#waits.delete(sessionKey);
    });
    this.#waits.set(sessionKey, wait);
    return wait;
  }

  /**
   * Resolves once this process's last refreshed record of the session is on a replica, or kept to
   * be written again; at once when none is waiting.
   */
  settled(sessionKey: string): Promise<void> {
    return this.#waits.get(sessionKey) ?? Promise.resolve();
  }

  async #settle(
    sessionKey: string,
    pending: Extract<Pending, { kind: 'record' }>,
    writeFailed: boolean,
  ): Promise<void> {
    const { record } = pending;
    const outcome = writeFailed
      ? 'failed'
      : await this.confirm(this.#deps.recordKey(sessionKey), record.version);
    // A later write of this process took its place meanwhile: that one decides.
    if (this.#pending.get(sessionKey) !== pending) return;
    if (outcome === 'acknowledged' || outcome === 'no-replica') {
      this.#pending.delete(sessionKey);
      return;
    }
    // Not on a replica yet (a slow one, or none reachable): kept until one holds it, and
    // written again if the primary goes first.
    if (outcome === 'failed') this.lost();
    pending.waiting = false;
    this.#schedule();
  }

  /** A login's record was deleted: resolves once a replica holds the deletion, or it is kept. */
  async recordDeleted(sessionKey: string, ttlMs: number): Promise<void> {
    const outcome = await this.confirm(this.#deps.recordKey(sessionKey), null);
    if (outcome === 'acknowledged' || outcome === 'no-replica') return;
    this.#keep(sessionKey, { kind: 'delete', expiresAt: Date.now() + ttlMs });
  }

  /** What this process knows newer than `read`: a record kept for the new primary wins over an older one. */
  overlay(sessionKey: string, read: RecordRead): RecordRead {
    const kept = this.#pending.get(sessionKey);
    if (kept === undefined) return read;
    if (kept.kind === 'delete') return read.status === 'found' ? { status: 'absent' } : read;
    if (read.status === 'found' && read.record.version > kept.replaced) return read;
    return { status: 'found', record: kept.record };
  }

  close(): void {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#pending.clear();
  }

  #keep(sessionKey: string, pending: Pending): void {
    this.#pending.set(sessionKey, pending);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#retry !== undefined || this.#pending.size === 0) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#tryAgain()
        .catch(ignore)
        .finally(() => this.#schedule());
    }, RETRY_MS);
    this.#retry.unref();
  }

  async #tryAgain(): Promise<void> {
    const now = Date.now();
    await Promise.all(
      [...this.#pending].map(async ([sessionKey, pending]) => {
        if (pending.kind === 'record' && pending.waiting) return; // its own wait decides
        if (pending.expiresAt <= now) {
          this.#pending.delete(sessionKey);
          return;
        }
        let outcome: ReassertOutcome | undefined;
        try {
          if (pending.kind === 'delete') {
            await this.#deps.redelete(sessionKey);
          } else {
            const { record, replaced, ttlMs } = pending;
            const left = Math.max(1, Math.min(ttlMs, pending.expiresAt - now));
            const written = await this.#deps.reassert(sessionKey, record, replaced, left);
            outcome = written === 1 ? 'written' : written === 2 ? 'present' : 'superseded';
          }
        } catch {
          this.lost();
          return; // still no primary: next time
        }
        if (outcome !== 'superseded') {
          const version = pending.kind === 'delete' ? null : pending.record.version;
          const held = await this.confirm(this.#deps.recordKey(sessionKey), version);
          if (held !== 'acknowledged' && held !== 'no-replica') return; // next time
        }
        // Unless a newer write of this process replaced it meanwhile.
        if (this.#pending.get(sessionKey) === pending) this.#pending.delete(sessionKey);
        if (outcome !== undefined) this.#deps.onReassert(outcome);
      }),
    );
  }
}

/** The seam, telling `lost` of each failure that may be the server going away (not a refusal). */
export function watchingLosses(redis: RedisCommands, lost: () => void): RedisCommands {
  const noticed = (error: unknown): never => {
    if (!isRefusal(error)) lost();
    throw error;
  };
  return {
    library: redis.library,
    topology: redis.topology,
    keyPrefix: redis.keyPrefix,
    get takesCommands() {
      return redis.takesCommands;
    },
    run: (command, key, args, replies) => redis.run(command, key, args, replies).catch(noticed),
    script: (script, keys, args, replies) =>
      redis.script(script, keys, args, replies).catch(noticed),
    onEnd: (listener) => redis.onEnd(listener),
    trackingLink: () => redis.trackingLink(),
    clusterLinks: () => redis.clusterLinks(),
    replicaLink: () => redis.replicaLink(),
  };
}
