export { RedisSessionStore } from './redis-session-store';
export type { RedisSessionStoreOptions, NodeRedisClient } from './session-store-options';
