// Claims an entry's code once the client address's failed entries and the platform's hold let it
// through: the four checks before an exchange (failures, hold, claim, login generation) are one
// store call (beginEntry), one round trip on a store that makes them one step (RedisTokenStore off
// a Cluster).
import { beginEntry } from '../core/entry-begin';
import type { TokenStore } from '../core/token-store';
import type { EntryFailureLimit } from './entry-failure-limit';
import { EXCHANGE_HOLD_KEY, EXCHANGE_HOLD_VERSION, type ExchangeHold } from './entry-exchange-hold';

/** The claim of one entry's code. */
export interface CodeClaim {
  /**
   * Claims the code of hash `codeHash`: resolves the login generation to hand to the record's
   * write, or `undefined` when the code was claimed before. Throws TooManyEntriesError (429) or
   * PlatformBusyError (503) when the address's failures or the hold stop the entry first.
   */
  claim(codeHash: string): Promise<string | undefined>;
  /**
   * Throws what `claim` would throw before claiming (429, 503), claiming nothing: for an entry
   * refused on other grounds, so it gets the same answer first as before the checks were one call.
   */
  refuseFirst(): Promise<void>;
}

/** Builds the claims of one callback; `address` is the request's counter key (none: limit off). */
export function createCodeClaim(
  store: TokenStore,
  failures: EntryFailureLimit | undefined,
  hold: ExchangeHold,
  claimTtlMs: number,
): (address: string | undefined) => CodeClaim {
  return (address) => ({
    async claim(codeHash) {
      const found = await beginEntry(store, {
        failureKey: address,
        failureLimit: failures?.limit ?? 1,
        failureWindowMs: failures?.windowMs ?? 1,
        holdKey: EXCHANGE_HOLD_KEY,
        holdVersion: EXCHANGE_HOLD_VERSION,
        claimKey: `code:${codeHash}`,
        claimTtlMs,
      });
      if (address !== undefined) failures!.judge(address, found.failures);
      hold.judge(found.heldMs);
      if (found.claimed !== true) return undefined;
      // The contract reads the generation with the claim; a store that left it out still gets the
      // check against logoutPlayer(), read now.
      return found.loginGeneration ?? (await store.records.loginGeneration());
    },
    async refuseFirst() {
      if (address !== undefined) await failures!.check(address);
      await hold.check();
    },
  });
}
