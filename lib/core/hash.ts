// One-way digests used wherever an identifier must be recognisable but not reversible: store keys,
// event payloads and log lines carry a hash of the session id or code, never the value itself.
import { createHash } from 'node:crypto';

/** SHA-256 of `value`, base64url, first 22 characters (132 bits): short, and no collision in practice. */
function shortHash(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}

/** The form in which a session id appears in store keys, events and logs. */
export const hashSessionId = (sessionId: string): string => shortHash(`session:${sessionId}`);

/** The form in which an authorization code is claimed in the store. */
export const hashCode = (code: string): string => shortHash(`code:${code}`);

/** The form in which a player's openId names their per-player index in a store. */
export const hashOpenId = (openId: string): string => shortHash(`player:${openId}`);
