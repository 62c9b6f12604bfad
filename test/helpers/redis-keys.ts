// Where RedisTokenStore keeps a browser's login in Redis: the engine's keys (lib/core/store-keys.ts)
// after the store's prefix, for tests that look at or change Redis by hand.
import { hashSessionId } from '../../lib/core/hash';
import { storeKeys } from '../../lib/core/store-keys';

export const redisKeys = (prefix: string) => ({
  /** The record of the session whose id the cookie carries. */
  record: (sessionId: string) => prefix + storeKeys.record(hashSessionId(sessionId)),
  /** The same, by session key (the hash of the session id). */
  recordOf: (sessionKey: string) => prefix + storeKeys.record(sessionKey),
  lock: (sessionId: string) => prefix + storeKeys.lock(hashSessionId(sessionId)),
  hold: (sessionId: string) => prefix + storeKeys.hold(hashSessionId(sessionId)),
  player: (playerKey: string) => prefix + storeKeys.player(playerKey),
  /** A pattern for KEYS that matches every record. */
  records: `${prefix}${storeKeys.record('*')}`,
});
