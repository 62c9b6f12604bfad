// What RedisTokenStore does so that a failover loses no login (DESIGN section 13): the writes a
// login depends on wait for a replica (replica-acks.ts); a refreshed record whose wait failed (the
// primary went away) stays in this process's memory, is served to this process, and is written
// again on the new primary, over the version it replaced only; and for a while after the server
// was lost, no refresh lock is handed out, so no process spends the refresh token the platform
// has just retired before its owner has written the new one back.
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
  | { kind: 'record'; record: TokenRecord; replaced: number; ttlMs: number; expiresAt: number }
  | { kind: 'delete'; expiresAt: number };

export interface DurableWritesDeps {
  acks: ReplicaAcks;
  /** Writes the record over version `replaced` (REASSERT_RECORD): 1 written, 2 there, 0 superseded. */
  reassert(
    sessionKey: string,
    record: TokenRecord,
    replaced: number,
    ttlMs: number,
  ): Promise<number>;
  /** Deletes the record again. */
  redelete(sessionKey: string): Promise<unknown>;
  /** Where the session's writes are confirmed (a key in its record's slot). */
  markKey(sessionKey: string): string;
  onReassert(outcome: ReassertOutcome): void;
}

export class DurableWrites {
  readonly #deps: DurableWritesDeps;
  readonly #pending = new Map<string, Pending>();
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

  /** Waits for a replica to hold the session's writes so far. */
  async confirm(sessionKey: string): Promise<ReplicaWaitOutcome> {
    const outcome = await this.#deps.acks.confirm(this.#deps.markKey(sessionKey));
    if (outcome === 'failed') this.lost();
    return outcome;
  }

  /**
   * A refreshed record was written over `replaced` (or its write failed on the way): resolves once
   * a replica holds it, or once it is kept here to be written again on the new primary.
   */
  async recordWritten(
    sessionKey: string,
    record: TokenRecord,
    replaced: number,
    ttlMs: number,
    writeFailed = false,
  ): Promise<void> {
    if (!writeFailed && (await this.confirm(sessionKey)) !== 'failed') return;
    this.lost();
    this.#keep(sessionKey, {
      kind: 'record',
      record,
      replaced,
      ttlMs,
      expiresAt: Date.now() + ttlMs,
    });
  }

  /** A login's record was deleted: resolves once a replica holds the deletion, or it is kept. */
  async recordDeleted(sessionKey: string, ttlMs: number): Promise<void> {
    if ((await this.confirm(sessionKey)) !== 'failed') return;
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

  /** A newer write of this process replaces what was kept. */
  forget(sessionKey: string): void {
    this.#pending.delete(sessionKey);
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
        if (outcome !== 'superseded' && (await this.confirm(sessionKey)) === 'failed') return;
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
