// Bounds the failed entries (malformed, used or refused codes) of one client address, counted in
// the shared store so every process sees them; past the limit an entry is refused before its code
// is claimed or sent. Successful entries are never counted, so players behind one NAT are not held
// back by each other's logins.
import type { Request } from 'express';
import { createClientAddressKeys } from './client-address';
import type { OneTimeCounters, WindowCount } from '../core/token-store';
import { TooManyEntriesError } from '../errors';
import { warnOnce } from '../setup/setup-checks';

/** The limit's settings (`entry.failureLimit` and its window), derived once at creation (settings.ts). */
export interface EntryFailureLimitSettings {
  /** Failed entries allowed per address per window; 0 turns the limit off. */
  limit: number;
  windowMs: number;
  /** Prefix length an IPv6 client is counted under (its allocation). */
  ipv6Subnet: number;
  /** Shared by every process of the game: keys the hash of client addresses in the store. */
  clientSecret: string;
}

/** The limit of one callback. */
export interface EntryFailureLimit {
  readonly limit: number;
  readonly windowMs: number;
  /**
   * The request's counter key. Throws TooManyEntriesError when this process already knows the
   * address is over its limit, with no store call.
   */
  keyOf(req: Request): string;
  /** Throws TooManyEntriesError when `failures`, the store's count for `key`, reached the limit. */
  judge(key: string, failures: WindowCount): void;
  /** Reads the store's count for `key` and judges it. */
  check(key: string): Promise<void>;
  /** Counts one failed entry of the address `key` (never throws: the entry's own answer stands). */
  countFailure(key: string): Promise<void>;
}

/** Addresses known to be over their limit, per process, so a flood costs no store call at all. */
const MAX_BLOCKED = 10_000;

const UNPARSABLE_MESSAGE =
  "[express-platform-login] An entry's client address (`req.ip`) is not an IP address, so its failed entries are counted under the value as it came. " +
  "Check Express's `trust proxy` setting against what your proxy writes in X-Forwarded-For (one address per proxy, no names).";

/** Builds the limit once, or `undefined` when it is off. */
export function createEntryFailureLimit(
  settings: EntryFailureLimitSettings,
  counters: OneTimeCounters,
  warn: (message: string) => void,
): EntryFailureLimit | undefined {
  const { limit, windowMs } = settings;
  if (limit === 0) return undefined;
  const addresses = createClientAddressKeys(settings.clientSecret, settings.ipv6Subnet);
  const blockedUntil = new Map<string, number>();
  /** The counter key of a request: `req.ip`, so Express's `trust proxy` decides whose address it is. */
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

  const block = (key: string, resetInMs: number): void => {
    blockedUntil.delete(key);
    blockedUntil.set(key, Date.now() + resetInMs);
    if (blockedUntil.size > MAX_BLOCKED) blockedUntil.delete(blockedUntil.keys().next().value!);
  };
  const refuse = (resetInMs: number): TooManyEntriesError =>
    new TooManyEntriesError(Math.max(1, Math.ceil(resetInMs / 1000)));
  const judge = (key: string, { count, resetInMs }: WindowCount): void => {
    if (count < limit) return;
    block(key, resetInMs);
    throw refuse(resetInMs);
  };

  return {
    limit,
    windowMs,
    keyOf,
    judge,
    async check(key) {
      judge(key, await counters.countInWindow(key, 0, windowMs));
    },
    async countFailure(key) {
      try {
        const { count, resetInMs } = await counters.countInWindow(key, 1, windowMs);
        if (count >= limit) block(key, resetInMs);
      } catch {
        // The store failed: the entry already failed on its own account; its answer stands.
      }
    },
  };
}
