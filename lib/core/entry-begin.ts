// An entry's checks before its code exchange: the store's own `entries.begin` when it has one (one
// round trip), else the same calls one by one. Both give the same answers (the store contract).
import type { EntryBegin, EntryBeginning, TokenStore } from './token-store';

const NO_FAILURES = { count: 0, resetInMs: 0 } as const;

/** Runs `entry`'s checks on `store` (see EntryChecks). */
export function beginEntry(store: TokenStore, entry: EntryBegin): Promise<EntryBeginning> {
  return store.entries !== undefined ? store.entries.begin(entry) : beginWithParts(store, entry);
}

/** The checks as the store's parts make them, each only when the one before let the entry on. */
async function beginWithParts(store: TokenStore, entry: EntryBegin): Promise<EntryBeginning> {
  const stopped = { heldMs: 0, claimed: undefined, loginGeneration: undefined };
  const failures =
    entry.failureKey === undefined
      ? NO_FAILURES
      : await store.counters.countInWindow(entry.failureKey, 0, entry.failureWindowMs);
  if (entry.failureKey !== undefined && failures.count >= entry.failureLimit)
    return { failures, ...stopped };
  const heldMs = await store.locks.heldMs(entry.holdKey, entry.holdVersion);
  if (heldMs > 0) return { failures, ...stopped, heldMs };
  if (!(await store.counters.claimOnce(entry.claimKey, entry.claimTtlMs)))
    return { failures, heldMs, claimed: false, loginGeneration: undefined };
  return {
    failures,
    heldMs,
    claimed: true,
    loginGeneration: await store.records.loginGeneration(),
  };
}
