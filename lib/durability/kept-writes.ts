// The writes this process keeps through a failover (docs/durability.md): a refreshed record is
// served to this process from its write until a replica holds it, and when its wait fails or
// times out it is written again until one does, over the versions it replaced only; a deletion
// no replica holds is done again. Nothing here decides when: the store's durability does.
import type { StoredValue } from '../core/token-store';
import { ignore } from '../util/ignore';
import { held, type ReplicaWaitOutcome } from './replica-acks';
import { RETRY_MS } from './windows';

/** How a write kept for the new primary ended. */
export type ReassertOutcome = 'written' | 'present' | 'superseded';

/** A write kept in memory until a replica holds it. */
type Pending =
  | {
      kind: 'record';
      /** The record's value as stored, served by {@link KeptWrites.overlay}. */
      record: StoredValue;
      replaced: number;
      ttlMs: number;
      expiresAt: number;
      /** Its first wait for a replica is still running: served here, not written again yet. */
      waiting: boolean;
    }
  | { kind: 'delete'; expiresAt: number };

export interface KeptWritesDeps {
  /**
   * Waits for a replica to hold the write of `key`, and looks for it where a failover may have
   * come in between (`version`: the record at that version or later, `null`: absent).
   */
  confirm(key: string, version: number | null): Promise<ReplicaWaitOutcome>;
  /** A write kept here met no primary: a sign that the server changed. */
  lost(): void;
  /**
   * Writes the record over any version from `replaced` up to its own (REASSERT_RECORD): 1
   * written, 2 there, 0 superseded (absent included: a deletion wins).
   */
  reassert(
    sessionKey: string,
    record: StoredValue,
    replaced: number,
    ttlMs: number,
  ): Promise<number>;
  /** Deletes the record again. */
  redelete(sessionKey: string): Promise<unknown>;
  /** The Redis key of the session's record. */
  recordKey(sessionKey: string): string;
  onReassert(outcome: ReassertOutcome): void;
}

export class KeptWrites {
  readonly #pending = new Map<string, Pending>();
  /** The running waits for a replica of refreshed records, by session. */
  readonly #waits = new Map<string, Promise<void>>();
  #retry: NodeJS.Timeout | undefined;

  constructor(private readonly deps: KeptWritesDeps) {}

  /**
   * The version a refresh of `expected` is written over: `expected` itself, or, when `expected` is
   * a record kept here (refreshed again before the new primary had it), the oldest version that
   * record replaced; `chained` then says to write it as a re-assert.
   */
  writeOver(sessionKey: string, expected: number): { replaced: number; chained: boolean } {
    const kept = this.#pending.get(sessionKey);
    return kept?.kind === 'record' && kept.record.version === expected
      ? { replaced: kept.replaced, chained: true }
      : { replaced: expected, chained: false };
  }

  /**
   * A refreshed record was written over `replaced` (or its write failed on the way): kept until a
   * replica holds it. Resolves when that is decided, as {@link settled} tells.
   */
  recordWritten(
    sessionKey: string,
    record: StoredValue,
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
      : await this.deps.confirm(this.deps.recordKey(sessionKey), record.version);
    // A later write of this process took its place meanwhile: that one decides.
    if (this.#pending.get(sessionKey) !== pending) return;
    if (held(outcome)) {
      this.#pending.delete(sessionKey);
      return;
    }
    // Not on a replica yet (a slow one, or none reachable): kept until one holds it, and
    // written again if the primary goes first.
    pending.waiting = false;
    this.#schedule();
  }

  /**
   * A login's record was deleted: resolves how its wait for a replica ended; a deletion no replica
   * holds is kept, and done again until one does.
   */
  async recordDeleted(sessionKey: string, ttlMs: number): Promise<ReplicaWaitOutcome> {
    const outcome = await this.deps.confirm(this.deps.recordKey(sessionKey), null);
    if (!held(outcome)) {
      this.#pending.set(sessionKey, { kind: 'delete', expiresAt: Date.now() + ttlMs });
      this.#schedule();
    }
    return outcome;
  }

  /** What this process knows newer than `stored`, the record's value as read (docs/durability.md). */
  overlay(sessionKey: string, stored: StoredValue | undefined): StoredValue | undefined {
    const kept = this.#pending.get(sessionKey);
    if (kept === undefined || stored === undefined) return stored;
    if (kept.kind === 'delete') return undefined;
    return stored.version > kept.replaced ? stored : kept.record;
  }

  close(): void {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#pending.clear();
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
            await this.deps.redelete(sessionKey);
          } else {
            const { record, replaced, ttlMs } = pending;
            const left = Math.max(1, Math.min(ttlMs, pending.expiresAt - now));
            const written = await this.deps.reassert(sessionKey, record, replaced, left);
            outcome = written === 1 ? 'written' : written === 2 ? 'present' : 'superseded';
          }
        } catch {
          this.deps.lost();
          return; // still no primary: next time
        }
        if (outcome !== 'superseded') {
          const version = pending.kind === 'delete' ? null : pending.record.version;
          if (!held(await this.deps.confirm(this.deps.recordKey(sessionKey), version))) return;
        }
        // Unless a newer write of this process replaced it meanwhile.
        if (this.#pending.get(sessionKey) === pending) this.#pending.delete(sessionKey);
        if (outcome !== undefined) this.deps.onReassert(outcome);
      }),
    );
  }
}
