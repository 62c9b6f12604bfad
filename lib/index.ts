// express-platform-login: named re-exports only. Nothing is exported that a user cannot use.
import './http/express-augment';

// The wiring root and its options.
export { platformLogin, PlatformLogin } from './platform-login';
export type { PlatformLoginOptions, RefreshOptions, EntryOptions, ApiOptions } from './options';
export type { MiddlewareOptions } from './http/middleware';
export type { LogoutOptions } from './http/logout';
export type { EntryContextOptions } from './entry/entry-context';
export type { PlatformUser } from './http/player-context';
export type { OpenApiRequestInit } from './open-api/open-api-client';
export type { AfterLoginHook, AfterLoginContext } from './entry/after-login';

// Sockets: the same login on a WebSocket, told when it ends.
export type {
  PlatformSockets,
  SocketsOptions,
  SessionMiddleware,
} from './sockets/platform-sockets';
export { SocketLogin, LOGIN_ENDED_CLOSE_CODE, type LoginEnd } from './sockets/socket-login';
export type { WsServer, WsSocket, WsUpgradeOptions } from './sockets/ws-upgrade';
export {
  LOGIN_ENDED_EVENT,
  type SocketIoNamespace,
  type SocketIoSocket,
} from './sockets/socket-io';

// Jobs: a player's login by openId, with no request.
export type { LoggedInPlayer } from './jobs/player-logins';

// Events, logs, metrics, readiness.
export type {
  PlatformLoginEvents,
  EntryContextViolation,
  EntryContextViolationReason,
  LockWaitOutcome,
} from './observability/events';
export {
  debugLogger,
  redactUrl,
  type PlatformLogger,
  type LogFields,
} from './observability/logger';
export type { ReadinessReport } from './core/readiness';

// The token endpoint client, usable on its own.
export { PlatformTokenClient } from './client/token-client';
export type {
  PlatformTokenClientOptions,
  TokenClientTuning,
  TokenAttempt,
} from './client/token-client-options';
export { TokenSet, type TokenSetFields } from './client/token-set';

// Token stores; what a studio's own store implements is TokenStore (express-platform-login/testing
// has its types and the suite that checks it).
export type { TokenRecord } from './core/token-record';
export type { TokenStore } from './core/token-store';
export { MemoryTokenStore } from './stores/memory-store';
export type { MemoryTokenStoreOptions } from './stores/memory-store-options';
export { RedisTokenStore, type RedisTokenStoreEvents } from './stores/redis-store';
export type { RedisTokenStoreOptions } from './stores/redis-store-options';
export { RedisSessionStore } from './session-store';
export type { RedisSessionStoreOptions } from './session-store';
export type { EncryptionKey } from './stores/encryption';

// Embedded mode and setup checks.
export {
  embeddedSessionCookie,
  type EmbeddedSessionCookie,
  type EmbeddedSessionCookieOptions,
} from './entry/embedded-cookie';
export {
  checkSetup,
  type SetupCheckInput,
  type SetupCheckName,
  type SetupProblem,
} from './setup/setup-checks';

// Errors, one class per thing the caller does next; `code` says which (`switch (err.code)` narrows
// AnyPlatformLoginError to the class that carries it).
export {
  PlatformLoginError,
  isPlatformLoginError,
  type AnyPlatformLoginError,
  type PlatformErrorCode,
  // fix the configuration
  SetupError,
  // the player must enter again
  LoginRequiredError,
  // this request is refused as sent
  RequestRefusedError,
  // the platform failed or answered wrongly
  PlatformError,
  // the token store
  StoreUnavailableError,
} from './errors';
