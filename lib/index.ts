// express-platform-login: named re-exports only.
import './http/express-augment';

export { platformLogin, PlatformLogin } from './platform-login';
export type { PlatformLoginOptions } from './options';
export type { MiddlewareOptions } from './http/middleware';
export type { LogoutOptions } from './http/logout';
export type { PlatformUser } from './http/player-context';
export type { PlatformLoginEvents } from './observability/events';
export {
  debugLogger,
  redactUrl,
  type PlatformLogger,
  type LogFields,
} from './observability/logger';
export type { ReadinessReport } from './core/readiness';
export type { TokenAttempt } from './client/token-client-options';
export { PlatformTokenClient } from './client/token-client';
export type { PlatformTokenClientOptions } from './client/token-client-options';
export { TokenSet, type TokenSetFields } from './client/token-set';
export type { TokenRecord } from './core/token-record';
export type { TokenStore, PutOptions, DeleteOptions, TokenStoreEvents } from './core/token-store';
export { MemoryTokenStore } from './stores/memory-store';
export { RedisTokenStore } from './stores/redis-store';
export type { RedisTokenStoreOptions } from './stores/redis-store-options';
export {
  embeddedSessionCookie,
  type EmbeddedSessionCookie,
  type EmbeddedSessionCookieOptions,
} from './http/embedded-cookie';
export {
  checkSetup,
  type SetupCheckInput,
  type SetupCheckName,
  type SetupProblem,
} from './http/setup-checks';
export type { EntryContextOptions } from './http/entry-context';
export type {
  EntryContextViolation,
  EntryContextViolationReason,
  LockWaitOutcome,
} from './observability/events';
export type { MemoryTokenStoreOptions } from './stores/memory-store';
export type { EncryptionKey } from './stores/encryption';
export * from './errors';
