// The Redis key layout the sections read and delete by hand, in one place. The token store's
// layout is RedisTokenStore's (lib/stores/redis-store.ts: `<prefix>{<hash of the session id>}:t`);
// the session's is connect-redis's (`<prefix><session id>`).
import { hashSessionId } from '../../lib/core/hash';

/** The key of a session's token record under a RedisTokenStore `prefix`. */
export const recordKeyOf = (prefix: string, sessionId: string): string =>
  `${prefix}{${hashSessionId(sessionId)}}:t`;

/** The key connect-redis keeps a harness app's session under (its prefix is `<KEY_PREFIX>s:`). */
export const sessionKeyOf = (keyPrefix: string, sessionId: string): string =>
  `${keyPrefix}s:${sessionId}`;
