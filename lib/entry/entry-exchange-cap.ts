// Caps the code exchanges one process has waiting on the platform: a flood of entries cannot open
// unbounded outbound requests. Past the cap an entry is refused before its code is claimed.
import { PlatformBusyError } from '../errors';

/** Runs `exchange` in one of `max` slots; throws PlatformBusyError (503) when all are taken. */
export type ExchangeCap = <T>(exchange: () => Promise<T>) => Promise<T>;

/** Builds the cap of one callback (`entry.maxExchangesInFlight`). */
export function createExchangeCap(max: number): ExchangeCap {
  let inFlight = 0;
  return async (exchange) => {
    if (inFlight >= max) throw new PlatformBusyError();
    inFlight += 1;
    try {
      return await exchange();
    } finally {
      inFlight -= 1;
    }
  };
}
