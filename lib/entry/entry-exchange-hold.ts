// The platform's Retry-After at the code exchange, held as refreshes hold it: once the token endpoint
// asks the game to wait, no process sends a code until then, and entries meanwhile get 503
// `platform_busy` with the seconds left before their code is claimed (so the player's code stays good).
import type { RefreshLocks } from '../core/token-store';
import { PlatformBusyError } from '../errors';
import { ignore } from '../util/ignore';

/**
 * The hold lives among the store's refresh holds, under a name no session can take, so every process
 * sees it through the calls the refresh coordination already uses.
 */
export const EXCHANGE_HOLD_KEY = 'code-exchanges';
export const EXCHANGE_HOLD_VERSION = 1;

/** The hold of one callback. */
export interface ExchangeHold {
  /** Throws PlatformBusyError while this process knows a hold is on, with no store call. */
  known(): void;
  /** Throws PlatformBusyError (with the seconds left) when `leftMs`, the store's hold, is on. */
  judge(leftMs: number): void;
  /** Both, reading the store's hold: in this process or any. */
  check(): Promise<void>;
  /** Holds every exchange for `seconds` (the platform's Retry-After); never throws. */
  start(seconds: number): Promise<void>;
}

/** Builds the hold once, on the store's refresh holds. */
export function createExchangeHold(locks: RefreshLocks): ExchangeHold {
  /** Until when this process knows exchanges are held, so a flood while held costs no store call. */
  let heldUntil = 0;
  const busy = (leftMs: number): PlatformBusyError =>
    new PlatformBusyError({ platformRetryAfterSeconds: Math.max(1, Math.ceil(leftMs / 1000)) });
  const known = (): void => {
    const leftMs = heldUntil - Date.now();
    if (leftMs > 0) throw busy(leftMs);
  };
  const judge = (leftMs: number): void => {
    if (leftMs <= 0) return;
    heldUntil = Date.now() + leftMs;
    throw busy(leftMs);
  };
  return {
    known,
    judge,
    async check() {
      known();
      judge(await locks.heldMs(EXCHANGE_HOLD_KEY, EXCHANGE_HOLD_VERSION));
    },
    async start(seconds) {
      const holdMs = seconds * 1000;
      heldUntil = Math.max(heldUntil, Date.now() + holdMs);
      await locks.hold(EXCHANGE_HOLD_KEY, EXCHANGE_HOLD_VERSION, holdMs).catch(ignore);
    },
  };
}
