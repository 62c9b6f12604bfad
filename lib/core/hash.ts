// One-way digests used wherever an identifier must be recognisable but not reversible: store keys,
// event payloads and log lines carry a hash of the session id or code, never the value itself.
import { createHash } from 'node:crypto';

/** SHA-256 of `value`, base64url, first 22 characters (132 bits): short, and no collision in practice. */
function shortHash(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}

/** How many session ids {@link hashSessionId} remembers: about the sessions one process serves at once. */
const SESSION_HASH_MEMO_SIZE = 10_000;
/** Recent session id → hash, oldest first: every request of a session needs its record's key. */
const sessionHashes = new Map<string, string>();

/**
 * The form in which a session id appears in store keys, events and logs. Remembered for the most
 * recent sessions, so a session's later requests cost a map lookup instead of a SHA-256.
 */
export function hashSessionId(sessionId: string): string {
  let hash = sessionHashes.get(sessionId);
  if (hash === undefined) {
    hash = shortHash(`session:${sessionId}`);
    if (sessionHashes.size >= SESSION_HASH_MEMO_SIZE) {
      sessionHashes.delete(sessionHashes.keys().next().value as string);
    }
    sessionHashes.set(sessionId, hash);
  }
  return hash;
}

/** The form in which an authorization code is claimed in the store. */
export const hashCode = (code: string): string => shortHash(`code:${code}`);

/** The form in which a player's openId names their per-player index in a store. */
export const hashOpenId = (openId: string): string => shortHash(`player:${openId}`);
