// How long a session lives, the rule token records follow (they never outlive their session; the
// session store keeps a session for its cookie's `maxAge`). Used by the entry, the middleware and
// sockets alike, so it lives below all three.

/** What the rule reads of an express-session session. */
export interface SessionWithCookie {
  cookie?: { originalMaxAge?: number | null | undefined } | undefined;
}

/** The session's lifetime in ms: the cookie's `maxAge` when it has one, else `fallbackMs`. */
export function sessionTtlMsOf(session: SessionWithCookie, fallbackMs: number): number {
  const maxAge = session.cookie?.originalMaxAge;
  return typeof maxAge === 'number' && maxAge > 0 ? maxAge : fallbackMs;
}
