// express-platform-login: named re-exports only.
import './express-augment';

export { platformLogin, PlatformLogin } from './platform-login';
export type { PlatformLoginOptions } from './platform-login-options';
export type { MiddlewareOptions } from './middleware';
export type { LogoutOptions } from './logout';
export type { PlatformUser } from './player-context';
export type { PlatformLoginEvents } from './events';
export { debugLogger, redactUrl, type PlatformLogger, type LogFields } from './logger';
export type { ReadinessReport } from './readiness';
export type { TokenAttempt } from './token-client-options';
export { PlatformTokenClient } from './token-client';
export type { PlatformTokenClientOptions } from './token-client-options';
export { TokenSet, type TokenSetFields } from './token-set';
export type { TokenRecord } from './token-record';
export type { TokenStore, PutOptions, TokenStoreEvents } from './stores/token-store';
export { MemoryTokenStore } from './stores/memory-store';
export { RedisTokenStore } from './stores/redis-store';
export type { RedisTokenStoreOptions } from './stores/redis-store-options';
export {
  embeddedSessionCookie,
  type EmbeddedSessionCookie,
  type EmbeddedSessionCookieOptions,
} from './embedded-cookie';
export {
  checkSetup,
  type SetupCheckInput,
  type SetupCheckName,
  type SetupProblem,
} from './startup-checks';
export type {
  EntryContextOptions,
  EntryContextViolation,
  EntryContextViolationReason,
} from './entry-context';
export type { MemoryTokenStoreOptions } from './stores/memory-store';
export type { EncryptionKey } from './stores/encryption';
export * from './errors';
