// What the token endpoint last did, kept by the `tokenAttempt` event's subscriber; read by `login.ready()`.

/** What the token endpoint last did, for `login.ready()` (the store is probed, not remembered). */
export interface PlatformHealth {
  /** Last time the token endpoint answered at all (any HTTP status), epoch ms; 0 if never. */
  platformLastAnsweredAt: number;
  /** Outcome of the last token-endpoint attempt (`ok` or an error code); undefined if none yet. */
  platformLastOutcome: string | undefined;
}
