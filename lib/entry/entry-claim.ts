// Claims an entry's code once the address's count, the platform's hold and the budget let it through
// (one store call, beginEntry), then follows the entry to its end to give back what it took.
import { beginEntry } from '../core/entry-begin';
import type { CountGiveBack, StoreEngine } from '../core/store-engine';
import { tooManyEntries } from '../errors';
import { ignore } from '../util/ignore';
import { failedKeyOf, type EntryFailureLimit } from './entry-failure-limit';
import { EXCHANGE_HOLD, type ExchangeHold } from './entry-exchange-hold';

/** The counter of the budget of exchanges for addresses with failed entries (1 s windows). */
const BUDGET_KEY = 'code-exchange-budget';

/** The claim of one entry's code. */
export type CodeClaim = ReturnType<ReturnType<typeof createCodeClaim>>;

/** Builds the claims of one callback; `address` is the request's counter key (none: limit off). */
export function createCodeClaim(
  store: StoreEngine,
  failures: EntryFailureLimit | undefined,
  hold: ExchangeHold,
  claimTtlMs: number,
) {
  const budgetPerSecond = failures?.budgetPerSecond ?? 0;
  return (address: string | undefined) => {
    let reserved = false;
    let probing = false;
    let budgeted = false;
    return {
      /** Whether the address's count holds one for this entry (`claim` took it). */
      get reserved(): boolean {
        return reserved;
      },
      /**
       * The count this entry holds on its address's counter, for the login's write to give back in
       * the same step (TokenStore `logins`); `undefined` when it holds none.
       */
      reservation(): CountGiveBack | undefined {
        return reserved ? { key: address!, windowMs: failures!.windowMs } : undefined;
      },
      /** The login's write gave back the {@link reservation}: `settle` does not. */
      gaveBack(): void {
        reserved = false;
      },
      /**
       * Claims the code of hash `codeHash`: resolves the login generation to hand to the record's
       * write, or `undefined` when the code was claimed before. Throws RequestRefusedError (429
       * `ERR_PLATFORM_TOO_MANY_ENTRIES`, 503 `ERR_PLATFORM_BUSY`) when the address's count, the
       * budget or the hold stop the entry first.
       */
      async claim(codeHash: string): Promise<string | undefined> {
        const found = await beginEntry(store, {
          failureKey: address,
          failedKey: address === undefined ? undefined : failedKeyOf(address),
          failureLimit: failures?.limit ?? 1,
          failureWindowMs: failures?.windowMs ?? 1,
          ...EXCHANGE_HOLD,
          budgetKey: budgetPerSecond > 0 ? BUDGET_KEY : undefined,
          budgetPerSecond: Math.max(1, budgetPerSecond),
          claimKey: `code:${codeHash}`,
          claimTtlMs,
        });
        reserved = found.reserved;
        probing = found.probing;
        budgeted = found.budgeted;
        const { stopped } = found;
        if (stopped !== undefined) {
          const { reason, retryInMs } = stopped;
          if (reason === 'failures') throw failures!.refuse(address!, retryInMs);
          if (reason === 'budget') throw tooManyEntries(Math.max(1, Math.ceil(retryInMs / 1000)));
          throw hold.busy(retryInMs);
        }
        if (found.claimed !== true) return undefined;
        // The contract reads the generation with the claim; a store that left it out still gets the
        // check against logoutPlayer(), read now.
        return found.loginGeneration ?? (await store.records.loginGeneration());
      },
      /**
       * Throws what an entry of this address would get first (429, 503), claiming nothing: for an
       * entry refused on other grounds (a malformed code).
       */
      async refuseFirst(): Promise<void> {
        if (address !== undefined) await failures!.check(address);
        await hold.check();
      },
      /**
       * The entry ended: unless it `failedOnItsCode`, gives back its count; when this entry probed
       * the held platform and the platform answered it (tokens or a refusal of the code, no
       * Retry-After), ends the hold. Never throws.
       */
      async settle(failedOnItsCode: boolean, platformAnswered: boolean): Promise<void> {
        if (budgeted && !failedOnItsCode) {
          budgeted = false;
          await store.counters.countInWindow(BUDGET_KEY, -1, 1000).catch(ignore);
        }
        if (reserved && !failedOnItsCode) {
          reserved = false;
          await failures!.giveBack(address!);
        }
        if (probing && platformAnswered) {
          probing = false;
          await hold.lift();
        }
      },
    };
  };
}
