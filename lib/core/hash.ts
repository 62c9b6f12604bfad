// One-way digests used wherever an identifier must be recognisable but not reversible: store keys,
// event payloads and log lines carry a hash of the session id or code, never the value itself.
import { hash } from 'node:crypto';

/**
 * SHA-256 of `value`, base64url, first 22 characters (132 bits): short, and no collision in practice.
 * The one-shot `hash` (0.3 µs on Node 24) rather than a Hash object (0.8 µs): it runs on every request.
 */
function shortHash(value: string): string {
  return hash('sha256', value, 'base64url').slice(0, 22);
}

/** The form in which a session id appears in store keys, events and logs. */
export const hashSessionId = (sessionId: string): string => shortHash(`session:${sessionId}`);

/** The form in which an authorization code is claimed in the store. */
export const hashCode = (code: string): string => shortHash(`code:${code}`);

/** The form in which a player's openId names their per-player index in a store. */
export const hashOpenId = (openId: string): string => shortHash(`player:${openId}`);
