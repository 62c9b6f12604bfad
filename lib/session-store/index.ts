export { RedisSessionStore } from './redis-session-store';
export type { RedisSessionStoreOptions } from './session-store-options';
