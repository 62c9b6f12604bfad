// The `entry` options of platformLogin(), and the entry's settings derived from them once, a slice
// for each of its parts in the units it works in.
import { z } from 'zod';
import { integerOption, type OptionsSchema } from '../util/parse-options';
import { entryContextSchema, entryContextSettings } from './entry-context';

const entryShape = {
  /**
   * Checks that entries come from `platformOrigins` (login CSRF; see docs/entry-trust.md). Defaults
   * to `{ mode: 'enforce' }` with `platformOrigins`, else `{ mode: 'report' }` and a start-up warning;
   * under NODE_ENV=production, no `platformOrigins` refuses the start unless a mode is set here.
   */
  context: entryContextSchema.optional() as z.ZodOptional<typeof entryContextSchema>,
  /**
   * Failed entries (malformed, used or refused codes) allowed per client address (`req.ip`: set
   * Express's `trust proxy` behind a proxy) per window, counted across processes in the store; then
   * 429 `too_many_entries` before any code is claimed or sent. `0` turns the limit off. Defaults to `20`.
   */
  failureLimit: integerOption(0, 1_000_000, '').default(20),
  /** The window of `failureLimit`, in seconds (1 to 86400), opened by an address's first failure. Defaults to `600`. */
  failureWindowSeconds: integerOption(1, 86_400, ' number of seconds').default(600),
  /**
   * `failureLimit` counts an IPv6 client by its network of this many bits (as express-rate-limit's
   * `ipv6Subnet`): one customer gets a whole /56 to pick addresses from. 32 to 128. Defaults to `56`.
   */
  ipv6Subnet: integerOption(32, 128, ' prefix length').default(56),
  /**
   * Code exchanges per second, across all processes, that may come from client addresses already
   * counted in their window (a failed entry, or one still under way); past it such an entry gets
   * 429 `too_many_entries` for the rest of the second, before its code is claimed or sent. Addresses
   * with nothing counted are never held by it. Set it to a third of the platform's limit of token
   * calls per second or less (a one-second window lets two budgets through at its edge, and your
   * players' own entries and refreshes need the rest). `0` turns it off. Defaults to `3`.
   */
  failedExchangesPerSecond: integerOption(0, 100_000, '').default(3),
  /**
   * Code exchanges one process may have waiting on the platform; past it an entry is refused with
   * 503 `platform_busy` before its code is claimed. Defaults to `64`.
   */
  maxExchangesInFlight: integerOption(1, 10_000, '').default(64),
  /** Longest accepted `code` parameter, in characters (16 to 4096). Defaults to `512`. */
  maxCodeLength: integerOption(16, 4096, '').default(512),
  /**
   * How long a redeemed code is remembered so it is never sent twice, in seconds (at least 600).
   * Defaults to `900`.
   */
  codeClaimTtlSeconds: z
    .number({ error: 'must be an integer number of seconds, at least 600' })
    .int()
    .min(600)
    .default(900),
};

/** The `entry` options of platformLogin(): the callback the platform sends players to, its checks and limits. */
export const entryOptionsSchema: OptionsSchema<typeof entryShape> = z.strictObject(entryShape);

/** What the entry takes from the rest of platformLogin()'s options and parts. */
export interface EntryShared {
  successRedirect: string;
  embedded: boolean;
  platformOrigins: readonly string[] | undefined;
  /** Keys the hash of client addresses in the store (shared by every process of the game). */
  clientSecret: string;
  /** A refresh token's lifetime when the platform does not say: the refresh part's figure. */
  refreshTokenLifetimeMs: number;
  /** Session lifetime when the session cookie has no `maxAge`. */
  sessionTtlMs: number;
}

/** The entry's settings, derived once at creation: a slice for each of its parts (callback.ts). */
export type EntrySettings = ReturnType<typeof entrySettings>;

/** The entry's settings from the `entry` options, once. */
export function entrySettings(options: z.output<typeof entryOptionsSchema>, around: EntryShared) {
  return {
    guards: {
      successRedirect: around.successRedirect,
      embedded: around.embedded,
      context: entryContextSettings(options.context, around.platformOrigins, around.embedded),
    },
    failureLimit: {
      limit: options.failureLimit,
      windowMs: options.failureWindowSeconds * 1000,
      ipv6Subnet: options.ipv6Subnet,
      clientSecret: around.clientSecret,
      budgetPerSecond: options.failedExchangesPerSecond,
    },
    redemption: {
      refreshTokenLifetimeMs: around.refreshTokenLifetimeMs,
      maxExchangesInFlight: options.maxExchangesInFlight,
      sessionTtlMs: around.sessionTtlMs,
    },
    maxCodeLength: options.maxCodeLength,
    claimTtlMs: options.codeClaimTtlSeconds * 1000,
  };
}
