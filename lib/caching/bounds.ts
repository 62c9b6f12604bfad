// Every bound of the record and session caches and of their key tracking, named once; the reason
// for each figure is in docs/caching.md ("Bounds").

/** Entries a cache holds by default. */
export const DEFAULT_ENTRIES = 10_000;
/** The most entries a cache may be asked to hold. */
export const MAX_ENTRIES = 10_000_000;

/** The timings of every key tracking link, in milliseconds. */
export const TRACKING_TIMING = {
  /** How often the tracking connection and the database mark are checked. */
  heartbeatMs: 100,
  /** Memory serves until this long after an answered heartbeat was sent, never later. */
  leaseMs: 250,
  /** An unanswered heartbeat is given up after this long, and the next one sent. */
  probeTimeoutMs: 1000,
  /** Nothing answered on the tracking connection for this long: it is made again. */
  reconnectAfterMs: 3000,
  /** A set-up waits this long to see its own write of the mark reported ... */
  proofTimeoutMs: 1000,
  /** ... and tracking is given up as unavailable after this many set-ups without one. */
  proofAttempts: 3,
  /** After a failed set-up, the next one waits this many heartbeats. */
  setUpRetryBeats: 5,
} as const;

/** On a Cluster: the slot map is compared in full every this many heartbeats. */
export const CLUSTER_FULL_CHECK_BEATS = 10;
/** On a Cluster: hash tags tried for the marks. */
export const CLUSTER_MARK_SEARCH_LIMIT = 200_000;
