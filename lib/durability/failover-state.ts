// Whether a failover may be under way, as a circuit breaker: steady, then on a sign that the
// server changed settling (no refresh lock handed out), then unsettled (a refused refresh token
// re-reads first), then steady again. Every transition is in `phase` (docs/durability.md).
import { SETTLE_MS, UNSETTLED_MS } from './windows';

export type FailoverPhase = 'steady' | 'settling' | 'unsettled';

export class FailoverState {
  #lostAt = Number.NEGATIVE_INFINITY;

  /** `replicated`: whether the primary ever had a replica; `undefined` before ROLE answers. */
  constructor(private readonly replicated: () => boolean | undefined) {}

  /**
   * A sign that the server may have changed (store-durability.ts: a command failed on the connection,
   * the client reconnected or its Sentinel or Cluster switched; or a server answered as no master
   * would, or lacked a write a replica acknowledged). Counted only where a failover can lose a write: a
   * primary that never had a replica (ROLE said so) has nothing to settle. A heartbeat that came
   * late (an event-loop stall, a GC pause) is no sign and never comes here.
   */
  lost(): void {
    if (this.replicated() === false) return;
    this.#lostAt = Date.now();
  }

  /** The one place that turns time since the last sign into a phase. */
  get phase(): FailoverPhase {
    const since = Date.now() - this.#lostAt;
    if (since < SETTLE_MS) return 'settling';
    if (since < UNSETTLED_MS) return 'unsettled';
    return 'steady';
  }
}
