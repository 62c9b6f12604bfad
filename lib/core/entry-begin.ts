// An entry's checks before its code exchange: the store's own `entries.begin` when it has one (one
// round trip), else the same calls one by one. Both give the same answers (the store contract),
// and both refuse the same wrong arguments, checked here once, whichever step would use them.
import type { EntryBegin, EntryBeginning, TokenStore } from './token-store';

const NO_FAILURES = { count: 0, resetInMs: 0 } as const;

const isKey = (value: unknown): boolean =>
  typeof value === 'string' && value.length > 0 && value.length <= 512;
const isPositive = (value: unknown): boolean =>
  typeof value === 'number' && value > 0 && Number.isFinite(value);

/** Throws a TypeError naming the first field of `entry` that is wrong. */
export function checkEntryBegin(entry: EntryBegin): void {
  const wrong = (field: keyof EntryBegin, what: string): never => {
    throw new TypeError(`EntryBegin.${field} must be ${what}.`);
  };
  if (entry.failureKey !== undefined) {
    if (!isKey(entry.failureKey)) wrong('failureKey', 'a string of 1 to 512 characters');
    if (!Number.isInteger(entry.failureLimit) || entry.failureLimit < 1)
      wrong('failureLimit', 'a whole number, 1 or more');
    if (!isPositive(entry.failureWindowMs))
      wrong('failureWindowMs', 'a positive number of milliseconds');
  }
  if (!isKey(entry.holdKey)) wrong('holdKey', 'a string of 1 to 512 characters');
  if (!Number.isInteger(entry.holdVersion) || entry.holdVersion < 0)
    wrong('holdVersion', 'a whole number, 0 or more');
  if (!isKey(entry.claimKey)) wrong('claimKey', 'a string of 1 to 512 characters');
  if (!isPositive(entry.claimTtlMs)) wrong('claimTtlMs', 'a positive number of milliseconds');
}

/** Runs `entry`'s checks on `store` (see EntryChecks). */
export async function beginEntry(store: TokenStore, entry: EntryBegin): Promise<EntryBeginning> {
  checkEntryBegin(entry);
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
