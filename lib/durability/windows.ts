// Every fixed window of the durability through a failover, named once; docs/durability.md ("The
// windows") says why each is what it is.

/** After a sign that the server changed, no refresh lock is handed out for this long. */
export const SETTLE_MS = 3000;
/** After a sign, a refresh token the platform refuses re-reads the record for this long first. */
export const UNSETTLED_MS = 15_000;
/** How often a write kept for the new primary is tried again. */
export const RETRY_MS = 100;
/** Waits for a replica in flight per master. */
export const LANES = 3;
/** A master with no replica is asked again (ROLE) after this long, not at every write. */
export const NO_REPLICA_RECHECK_MS = 1000;
/** A round whose ROLE and lane (a connection of its own) are not ready by then fails. */
export const LANE_READY_MS = 5000;
/** A round the server never answers fails this long after the WAIT's own timeout. */
export const ROUND_MARGIN_MS = 1000;
/** How long a wait's mark lives. */
export const MARK_TTL_MS = 60_000;
