// The bench's way to the token store by session id (the store is keyed by its hash), and the Redis
// keys the sections delete by hand: RedisTokenStore's record, connect-redis's session.
import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { hashSessionId } from '../../lib/core/hash';
import type { TokenRecord } from '../../lib/core/token-record';
import type { TokenStore } from '../../lib/core/token-store';
import type { PutOptions } from '../../lib/core/store-engine';
import { engineOf } from '../../lib/core/derived-engine';
import { sampleRecord as testingSample } from '../../lib/testing/samples';
import { RedisTokenStore } from '../../lib/stores/redis-store';

/** The driver's own store: it only rewrites records between runs, so it reads Redis each time. */
export const driverStore = (redis: Redis | Cluster, prefix: string) =>
  new RedisTokenStore({ redis, prefix, recordCache: false });

/** The session's record; `undefined` when absent or unreadable. */
export const readRecord = async (store: TokenStore, sessionId: string) => {
  const read = await engineOf(store).records.get(hashSessionId(sessionId));
  return read.status === 'found' ? read.record : undefined;
};

export const writeRecord = (
  store: TokenStore,
  sessionId: string,
  record: TokenRecord,
  options: PutOptions,
): Promise<boolean> => engineOf(store).records.put(hashSessionId(sessionId), record, options);

/** Resolves once the store's change notices tell of the session, or after `ms` (a poll without them). */
export function nextChange(store: TokenStore, sessionId: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unwatch?.();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const unwatch = engineOf(store).changes?.watch(hashSessionId(sessionId), done);
  });
}

/** The record this process holds in memory for the session (RedisTokenStore's cache), if any. */
export function heldRecord(store: TokenStore, sessionId: string): TokenRecord | undefined {
  const read = engineOf(store).records.cachedRead?.(hashSessionId(sessionId));
  return read?.status === 'found' ? read.record : undefined;
}

/** The key of a session's token record under a RedisTokenStore `prefix` (deleted by hand). */
export const recordKeyOf = (prefix: string, sessionId: string): string =>
  `${prefix}t:${hashSessionId(sessionId)}`;

/** The key connect-redis keeps a harness app's session under (its prefix is `<KEY_PREFIX>s:`). */
export const sessionKeyOf = (keyPrefix: string, id: string): string => `${keyPrefix}s:${id}`;

/** A version-1 record sized as the simulator's (43-character tokens, 32-character ids). */
export function sampleRecord(): TokenRecord {
  const [token, id] = [
    () => randomBytes(32).toString('base64url'),
    () => randomBytes(16).toString('hex'),
  ];
  const ids = { openId: id(), unionId: id(), scope: ['user_info', 'basic_actions'] };
  return testingSample(1, { accessToken: token(), refreshToken: token(), ...ids });
}
