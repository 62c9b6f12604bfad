// Claims an entry's code once the client address's failed entries and the platform's hold let it
// through: the four checks before an exchange (failures, hold, claim, login generation) are one
// store call (beginEntry), so an entry costs one round trip before its code is sent.
import { beginEntry } from '../core/entry-begin';
import type { TokenStore } from '../core/token-store';
import type { EntryFailureLimit } from './entry-failure-limit';
import { EXCHANGE_HOLD_KEY, EXCHANGE_HOLD_VERSION, type ExchangeHold } from './entry-exchange-hold';

/**
 * Claims the code of hash `codeHash` for one entry: resolves the login generation to hand to the
 * record's write, or `undefined` when the code was claimed before. Throws TooManyEntriesError
 * (429) or PlatformBusyError (503) when the address's failures or the hold stop the entry first.
 */
export type ClaimCode = (codeHash: string) => Promise<string | undefined>;

/** Builds the claim of one callback; `address` is the request's counter key (none: limit off). */
export function createCodeClaim(
  store: TokenStore,
  failures: EntryFailureLimit | undefined,
  hold: ExchangeHold,
  claimTtlMs: number,
): (address: string | undefined) => ClaimCode {
  return (address) => async (codeHash) => {
    const found = await beginEntry(store, {
      failureKey: address,
      failureLimit: failures?.limit ?? 0,
      failureWindowMs: failures?.windowMs ?? 1,
      holdKey: EXCHANGE_HOLD_KEY,
      holdVersion: EXCHANGE_HOLD_VERSION,
      claimKey: `code:${codeHash}`,
      claimTtlMs,
    });
    if (address !== undefined) failures!.judge(address, found.failures);
    hold.judge(found.heldMs);
    return found.claimed === true ? found.loginGeneration : undefined;
  };
}
