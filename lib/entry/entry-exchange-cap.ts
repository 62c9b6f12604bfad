// Caps the code exchanges one process has waiting on the platform: a flood of entries cannot open
// unbounded outbound requests. Past the cap an entry is refused before its code is claimed.
import { platformBusy } from '../errors';

/**
 * Builds the cap of one callback (`entry.maxExchangesInFlight`): runs `exchange` in one of `max`
 * slots. When all are taken, awaits `whenFull` (which may throw the answer the entry gets first)
 * and throws RequestRefusedError `ERR_PLATFORM_BUSY` (503).
 */
export function createExchangeCap(max: number) {
  let inFlight = 0;
  return async <T>(exchange: () => Promise<T>, whenFull: () => Promise<void>): Promise<T> => {
    if (inFlight >= max) {
      await whenFull();
      throw platformBusy();
    }
    inFlight += 1;
    try {
      return await exchange();
    } finally {
      inFlight -= 1;
    }
  };
}
