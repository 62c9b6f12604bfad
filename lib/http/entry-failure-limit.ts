// Bounds the failed entries (malformed, used or refused codes) of one client address, counted in
// the shared store so every process sees them; past the limit an entry is refused before its code
// is claimed or sent. Successful entries are never counted, so players behind one NAT are not held
// back by each other's logins.
import { isIPv6 } from 'node:net';
import type { Request } from 'express';
import { hashClientAddress } from '../core/hash';
import type { OneTimeCounters } from '../core/token-store';
import { TooManyEntriesError } from '../errors';

/** The limit's settings (the `entryFailureLimit` options of platformLogin()). */
export interface EntryFailureLimitConfig {
  /** Failed entries allowed per address per window; 0 turns the limit off. */
  entryFailureLimit: number;
  entryFailureWindowSeconds: number;
}

/** The limit of one callback. */
export interface EntryFailureLimit {
  /** Throws TooManyEntriesError when the request's address is over its limit; resolves its key. */
  admit(req: Request): Promise<string>;
  /** Counts one failed entry of the address `key` (never throws: the entry's own answer stands). */
  countFailure(key: string): Promise<void>;
}

/** Addresses known to be over their limit, per process, so a flood costs no store call at all. */
const MAX_BLOCKED = 10_000;

/**
 * The address an entry is counted under: `req.ip` (so Express's `trust proxy` decides it), an
 * IPv4-mapped IPv6 address as IPv4, any other IPv6 address by its /56 prefix (one customer's
 * allocation, as express-rate-limit does), hashed so no address is written to the store.
 */
export function clientAddressKey(req: Request): string {
  let address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  if (address.startsWith('::ffff:') && address.includes('.')) address = address.slice(7);
  else if (isIPv6(address)) address = ipv6Prefix56(address);
  return `entry-failures:${hashClientAddress(address)}`;
}

/** The first 56 bits of an IPv6 address, as 14 hex digits. */
function ipv6Prefix56(address: string): string {
  const bare = address.split('%')[0]!;
  const [head = '', tail] = bare.split('::') as [string, string | undefined];
  const groups = (part: string | undefined): string[] =>
    part === undefined || part === '' ? [] : part.split(':');
  const left = groups(head);
  const right = groups(tail);
  const full =
    tail === undefined
      ? left
      : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return full
    .slice(0, 4)
    .map((group) => group.padStart(4, '0'))
    .join('')
    .slice(0, 14);
}

/** Builds the limit once, or `undefined` when it is off. */
export function createEntryFailureLimit(
  config: EntryFailureLimitConfig,
  counters: OneTimeCounters,
): EntryFailureLimit | undefined {
  const limit = config.entryFailureLimit;
  if (limit === 0) return undefined;
  const windowMs = config.entryFailureWindowSeconds * 1000;
  const blockedUntil = new Map<string, number>();

  const block = (key: string, resetInMs: number): void => {
    blockedUntil.delete(key);
    blockedUntil.set(key, Date.now() + resetInMs);
    if (blockedUntil.size > MAX_BLOCKED) blockedUntil.delete(blockedUntil.keys().next().value!);
  };
  const refuse = (resetInMs: number): TooManyEntriesError =>
    new TooManyEntriesError(Math.max(1, Math.ceil(resetInMs / 1000)));

  return {
    async admit(req) {
      const key = clientAddressKey(req);
      const until = blockedUntil.get(key);
      if (until !== undefined) {
        if (until > Date.now()) throw refuse(until - Date.now());
        blockedUntil.delete(key);
      }
      const { count, resetInMs } = await counters.countInWindow(key, 0, windowMs);
      if (count >= limit) {
        block(key, resetInMs);
        throw refuse(resetInMs);
      }
      return key;
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
