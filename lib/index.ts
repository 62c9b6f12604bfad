// express-platform-login: named re-exports only. Nothing is exported that a user cannot use; the
// types of a part's options and answers are reached from what is exported
// (`PlatformLoginOptions['entry']`, `ConstructorParameters<typeof RedisTokenStore>[0]`,
// `PlatformLoginEvents['login'][0]`). What only a store's author needs is in
// express-platform-login/testing.
import './http/express-augment';

// The wiring root and its options.
export { platformLogin, PlatformLogin } from './platform-login';
export type { PlatformLoginOptions } from './options';
export type { MiddlewareOptions } from './http/middleware';
export type { LogoutOptions } from './http/logout';
export type { PlatformUser } from './http/player-context';
export type { AfterLoginHook } from './entry/after-login';

// Sockets: the same login on a WebSocket, told when it ends.
export type { PlatformSockets, SocketsOptions } from './sockets/platform-sockets';
export { SocketLogin, LOGIN_ENDED_CLOSE_CODE } from './sockets/socket-login';
export type { WsUpgradeOptions } from './sockets/ws-upgrade';
export { LOGIN_ENDED_EVENT } from './sockets/socket-io';

// Jobs: a player's login by openId, with no request.
export type { LoggedInPlayer } from './http/player-context';
export type { PlayerRef } from './registrations/player-ref';

// Events, logs, metrics.
export type { PlatformLoginEvents } from './observability/events';
export { debugLogger, redactUrl, type PlatformLogger } from './observability/logger';

// The token endpoint client, usable on its own.
export { PlatformTokenClient } from './client/token-client';
export type { PlatformTokenClientOptions } from './client/token-client-options';
export { TokenSet } from './client/token-set';

// Token stores; what a studio's own store implements is TokenStore (express-platform-login/testing
// has its types and the suite that checks it).
export type { TokenRecord } from './core/token-record';
export type { TokenStore } from './core/token-store';
export { MemoryTokenStore } from './core/memory-store';
export { RedisTokenStore } from './stores/redis-store';
export { reportRedisErrors } from './stores/redis-error-report';
export { RedisSessionStore } from './session-store/redis-session-store';

// Embedded mode and setup checks.
export { embeddedSessionCookie } from './entry/embedded-cookie';
export { checkSetup } from './setup/setup-checks';

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
