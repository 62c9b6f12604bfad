// An entry's checks before its code exchange (docs/engine.md, "An entry's checks"): the store's own
// `entries.begin` when it has one (one round trip), else the same steps made with the store's
// parts; both refuse the same wrong arguments, checked here once.
import { checkClaimKey, ttlMilliseconds } from './engine-arguments';
import type { EntryBegin, EntryBeginning, EntryStop, StoreEngine } from './store-engine';

/** The window of the budget of addresses with a failed entry (`budgetPerSecond`). */
export const ENTRY_BUDGET_WINDOW_MS = 1000;

/** Throws a TypeError naming the first field of `entry` that is wrong. */
export function checkEntryBegin(entry: EntryBegin): void {
  const key = (field: keyof EntryBegin): void => checkClaimKey(entry[field], `EntryBegin.${field}`);
  const ttl = (field: keyof EntryBegin): number =>
    ttlMilliseconds(entry[field], `EntryBegin.${field}`);
  const count = (field: keyof EntryBegin, least: number): void => {
    const value = entry[field];
    if (!Number.isInteger(value) || (value as number) < least)
      throw new TypeError(`EntryBegin.${field} must be a whole number, ${least} or more.`);
  };
  if (entry.failureKey !== undefined) {
    key('failureKey');
    key('failedKey');
    count('failureLimit', 1);
    ttl('failureWindowMs');
  }
  key('holdKey');
  count('holdVersion', 0);
  key('probeKey');
  ttl('probeTtlMs');
  if (entry.budgetKey !== undefined) {
    key('budgetKey');
    count('budgetPerSecond', 1);
  }
  key('claimKey');
  ttl('claimTtlMs');
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
