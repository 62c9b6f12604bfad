// The platform's Retry-After at the code exchange, held across processes: addresses with failed or
// unfinished entries wait, others probe the platform once a second (docs/entry-trust.md).
import type { EventEmitter } from 'node:events';
import type { RefreshLocks } from '../core/store-engine';
import { platformBusy, type RequestRefusedError } from '../errors';
import type { PlatformLoginEvents } from '../observability/events';
import { ignore } from '../util/ignore';

/**
 * The hold's part of beginEntry's arguments (core/entry-begin.ts). The hold lives among the store's
 * refresh holds, under a name no session can take, so every process sees it through the calls the
 * refresh coordination already uses; a probe through it has a one-time key, one a second.
 */
export const EXCHANGE_HOLD = {
  holdKey: 'code-exchanges',
  holdVersion: 1,
  probeKey: 'code-exchange-probe',
  probeTtlMs: 1000,
} as const;
const { holdKey, holdVersion } = EXCHANGE_HOLD;

/** The hold of one callback. */
export type ExchangeHold = ReturnType<typeof createExchangeHold>;

/** Builds the hold once, on the store's refresh holds. */
export function createExchangeHold(locks: RefreshLocks, events: EventEmitter<PlatformLoginEvents>) {
  /** The answer to an entry the hold stopped, `leftMs` before it may come back. */
  const busy = (leftMs: number): RequestRefusedError =>
    platformBusy({ platformRetryAfterSeconds: Math.max(1, Math.ceil(leftMs / 1000)) });
  return {
    busy,
    /** Throws RequestRefusedError `ERR_PLATFORM_BUSY` (with the seconds left) when the store's hold is on. */
    async check(): Promise<void> {
      const leftMs = await locks.heldMs(holdKey, holdVersion);
      if (leftMs > 0) throw busy(leftMs);
    },
    /** Holds every exchange for `seconds` (the platform's Retry-After); never throws. */
    async start(seconds: number): Promise<void> {
      await locks.hold(holdKey, holdVersion, seconds * 1000).catch(ignore);
      events.emit('exchangeHold', { held: true, retryAfterSeconds: seconds });
    },
    /** Ends the hold: a probe was answered by the platform. Never throws. */
    async lift(): Promise<void> {
      // A hold of 1 ms is no hold: the contract has no other way to end one early. The event
      // follows the write, so a listener that reacts to it finds the hold over on every process.
      await locks.hold(holdKey, holdVersion, 1).catch(ignore);
      events.emit('exchangeHold', { held: false, retryAfterSeconds: 0 });
    },
  };
}
