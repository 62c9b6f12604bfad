// An entry's checks before its code exchange (docs/engine.md, "An entry's checks"): the store's own
// `entries.begin` when it has one (one round trip), else the same steps made with the store's
// parts; both refuse the same wrong arguments, checked here once.
import type { EntryBegin, EntryBeginning, EntryStop, StoreEngine } from './store-engine';

/** The window of the budget of addresses with a failed entry (`budgetPerSecond`). */
export const ENTRY_BUDGET_WINDOW_MS = 1000;

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
    if (!isKey(entry.failedKey)) wrong('failedKey', 'a string of 1 to 512 characters');
    if (!Number.isInteger(entry.failureLimit) || entry.failureLimit < 1)
      wrong('failureLimit', 'a whole number, 1 or more');
    if (!isPositive(entry.failureWindowMs))
      wrong('failureWindowMs', 'a positive number of milliseconds');
  }
  if (!isKey(entry.holdKey)) wrong('holdKey', 'a string of 1 to 512 characters');
  if (!Number.isInteger(entry.holdVersion) || entry.holdVersion < 0)
    wrong('holdVersion', 'a whole number, 0 or more');
  if (!isKey(entry.probeKey)) wrong('probeKey', 'a string of 1 to 512 characters');
  if (!isPositive(entry.probeTtlMs)) wrong('probeTtlMs', 'a positive number of milliseconds');
  if (entry.budgetKey !== undefined) {
    if (!isKey(entry.budgetKey)) wrong('budgetKey', 'a string of 1 to 512 characters');
    if (!Number.isInteger(entry.budgetPerSecond) || entry.budgetPerSecond < 1)
      wrong('budgetPerSecond', 'a whole number, 1 or more');
  }
  if (!isKey(entry.claimKey)) wrong('claimKey', 'a string of 1 to 512 characters');
  if (!isPositive(entry.claimTtlMs)) wrong('claimTtlMs', 'a positive number of milliseconds');
}

/** Runs `entry`'s checks on `store`. */
export async function beginEntry(store: StoreEngine, entry: EntryBegin): Promise<EntryBeginning> {
  checkEntryBegin(entry);
  return store.entries !== undefined ? store.entries.begin(entry) : beginWithParts(store, entry);
}

const stop = (reason: EntryStop, retryInMs: number): EntryBeginning => ({
  stopped: { reason, retryInMs: Math.max(1, retryInMs) },
  reserved: false,
  probing: false,
  budgeted: false,
  claimed: undefined,
  loginGeneration: undefined,
});

/** The steps with the store's parts: the address is counted first, given back when a later step stops. */
async function beginWithParts(store: StoreEngine, entry: EntryBegin): Promise<EntryBeginning> {
  const { counters } = store;
  const { failureKey, failureWindowMs } = entry;
  const giveBack = async (): Promise<void> => {
    if (failureKey !== undefined) await counters.countInWindow(failureKey, -1, failureWindowMs);
  };
  let clean = true;
  if (failureKey !== undefined) {
    const taken = await counters.countInWindow(failureKey, 1, failureWindowMs);
    if (taken.count > entry.failureLimit) {
      await giveBack();
      return stop('failures', taken.resetInMs);
    }
    clean = (await counters.countInWindow(entry.failedKey!, 0, failureWindowMs)).count === 0;
  }
  const heldMs = await store.locks.heldMs(entry.holdKey, entry.holdVersion);
  let probing = false;
  if (heldMs > 0) {
    if (!clean) {
      await giveBack();
      return stop('held', heldMs);
    }
    probing = await counters.claimOnce(entry.probeKey, entry.probeTtlMs);
    if (!probing) {
      await giveBack();
      return stop('probed', entry.probeTtlMs);
    }
  }
  const budgeted = !clean && entry.budgetKey !== undefined;
  if (budgeted) {
    const spent = await counters.countInWindow(entry.budgetKey!, 1, ENTRY_BUDGET_WINDOW_MS);
    if (spent.count > entry.budgetPerSecond) {
      await counters.countInWindow(entry.budgetKey!, -1, ENTRY_BUDGET_WINDOW_MS);
      await giveBack();
      return stop('budget', spent.resetInMs);
    }
  }
  const reserved = failureKey !== undefined;
  const went = { stopped: undefined, reserved, probing, budgeted };
  if (!(await counters.claimOnce(entry.claimKey, entry.claimTtlMs)))
    return { ...went, claimed: false, loginGeneration: undefined };
  return {
    ...went,
    claimed: true,
    loginGeneration: await store.records.loginGeneration(),
  };
}
