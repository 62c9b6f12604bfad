// What the token endpoint last did, kept from `tokenAttempt` events for `login.ready()`.

export interface PlatformHealth {
  /** Last time the token endpoint answered at all (any HTTP status), epoch ms; 0 if never. */
  platformLastAnsweredAt: number;
  /** Outcome of the last token-endpoint attempt (`ok` or an error code); undefined if none yet. */
  platformLastOutcome: string | undefined;
}
