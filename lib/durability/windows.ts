// Every fixed window of the durability through a failover, named once; docs/durability.md says
// what each protects.

/**
 * After a sign that the server changed, refresh locks are refused this long: a process that
 * rotated a refresh token just before the failover writes its record back (every RETRY_MS) before
 * any process may take the lock and present the token the platform has retired. Three seconds is
 * many retries, and a client's reconnect to the promoted replica, with room to spare.
 */
export const SETTLE_MS = 3000;

/**
 * After a sign that the server changed, a refresh token the platform refuses re-reads the record
 * this long before it ends the login: the owner of the newer record may still be writing it back
 * (a Sentinel's promotion takes a few seconds: down-after, election, reconfiguration).
 */
export const UNSETTLED_MS = 15_000;

/** How often a write kept for the new primary is tried again: soon after the primary answers. */
export const RETRY_MS = 100;

/** Waits for a replica in flight per master: more would only add connections, fewer queue writes. */
export const LANES = 3;

/** A master with no replica is asked again (ROLE) after this long, not at every write. */
export const NO_REPLICA_RECHECK_MS = 1000;

/** Beyond the WAIT's own timeout: a round the server never answers fails after this much more. */
export const ROUND_MARGIN_MS = 1000;

/** How long a wait's mark lives: long enough to be replicated, short enough to leave no trace. */
export const MARK_TTL_MS = 60_000;
