// Bounds the failed entries of one client address, counted in the shared store; an entry takes its
// count before its exchange and gives it back on success (docs/entry-trust.md).
import type { Request } from 'express';
import { createClientAddressKeys } from './client-address';
import type { OneTimeCounters } from '../core/store-engine';
import { tooManyEntries, type RequestRefusedError } from '../errors';
import { warnOnce } from '../setup/setup-checks';
import { ignore } from '../util/ignore';
import type { EntrySettings } from './entry-options';

/** The limit of one callback. */
export type EntryFailureLimit = NonNullable<ReturnType<typeof createEntryFailureLimit>>;

/** The counter of an address's failed entries alone, beside its count (see core/entry-begin.ts). */
export const failedKeyOf = (key: string): string => `${key}:failed`;

/** Addresses known to be over their limit, per process, so a flood costs no store call at all. */
const MAX_BLOCKED = 10_000;

const UNPARSABLE_MESSAGE =
  "An entry's client address (`req.ip`) is not an IP address, so its failed entries are counted under the value as it came. " +
  "Check Express's `trust proxy` setting against what your proxy writes in X-Forwarded-For (one address per proxy, no names).";

/** Builds the limit once, or `undefined` when it is off. */
export function createEntryFailureLimit(
  settings: EntrySettings['failureLimit'],
  counters: OneTimeCounters,
  warn: (message: string) => void,
) {
  const { limit, windowMs } = settings;
  if (limit === 0) return undefined;
  const addresses = createClientAddressKeys(settings.clientSecret, settings.ipv6Subnet);
  const blockedUntil = new Map<string, number>();
  /**
   * The request's counter key: `req.ip`, so Express's `trust proxy` decides whose address it is.
   * Throws RequestRefusedError `ERR_PLATFORM_TOO_MANY_ENTRIES` when this process already knows the
   * address is over its limit, with no store call.
   */
  const keyOf = (req: Request): string => {
    const { key, parsed } = addresses.keyOf(req.ip ?? req.socket.remoteAddress ?? 'unknown');
    if (!parsed) warnOnce(warn, UNPARSABLE_MESSAGE);
    const until = blockedUntil.get(key);
    if (until !== undefined) {
      if (until > Date.now()) throw refuse(until - Date.now());
      blockedUntil.delete(key);
    }
    return key;
  };

  const refuse = (resetInMs: number): RequestRefusedError =>
    tooManyEntries(Math.max(1, Math.ceil(resetInMs / 1000)));
  /** Remembers that `key` is over its limit for `resetInMs`; the answer to its entries meanwhile. */
  const block = (key: string, resetInMs: number): RequestRefusedError => {
    blockedUntil.delete(key);
    blockedUntil.set(key, Date.now() + resetInMs);
    if (blockedUntil.size > MAX_BLOCKED) blockedUntil.delete(blockedUntil.keys().next().value!);
    return refuse(resetInMs);
  };

  return {
    limit,
    windowMs,
    budgetPerSecond: settings.budgetPerSecond,
    keyOf,
    refuse: block,
    /** Reads the store's count for `key` and judges it. */
    async check(key: string): Promise<void> {
      const { count, resetInMs } = await counters.countInWindow(key, 0, windowMs);
      if (count >= limit) throw block(key, resetInMs);
    },
    /** Gives back the count an entry of `key` took before its exchange (never throws). */
    async giveBack(key: string): Promise<void> {
      await counters.countInWindow(key, -1, windowMs).catch(ignore);
    },
    /**
     * Counts one failed entry of the address `key`: on its count when the entry took none before
     * (`reserved` false), and when `failed` on its count of failures alone (which stops the address
     * probing a held platform and spends the budget). Never throws: the entry's answer stands.
     */
    async countFailure(key: string, reserved: boolean, failed: boolean): Promise<void> {
      try {
        const marked = failed && counters.countInWindow(failedKeyOf(key), 1, windowMs);
        const { count, resetInMs } = await counters.countInWindow(key, reserved ? 0 : 1, windowMs);
        await marked;
        if (count >= limit) block(key, resetInMs);
      } catch {
        // The store failed: the entry already failed on its own account; its answer stands.
      }
    },
  };
}
