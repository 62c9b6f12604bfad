// What the token endpoint last did, as seen by the token-attempt observer; read by `login.ready()`.

/** What the platform and the store last did, for `login.ready()`. */
export interface PlatformHealth {
  /** Last time the token endpoint answered at all (any HTTP status), epoch ms; 0 if never. */
  platformLastAnsweredAt: number;
  /** Outcome of the last token-endpoint attempt (`ok` or an error code); undefined if none yet. */
  platformLastOutcome: string | undefined;
}
