// Setup checks that need a live request, run on entries before the code is claimed: the session
// store in use (req.sessionStore), how Express sees the connection (req.secure, trust proxy,
// X-Forwarded-For it ignores) and, in production, the session cookie as this entry sends it.
import type { Request } from 'express';
import { SetupError } from '../errors';
import {
  CONNECT_REDIS_IOREDIS_MESSAGE,
  insecureCookieMessage,
  isConnectRedisWithIoredis,
  warnOnce,
} from './setup-checks';

// The messages go to the login's logger, which names the package itself (logger.ts).
const PROXY_MESSAGE =
  `An entry arrived through a proxy (X-Forwarded-Proto: https) but Express sees it as http, and the session cookie is Secure: ` +
  "express-session will not send the cookie, so players land logged out. Set `app.set('trust proxy', 1)` (the number of proxies in front of the app) before the session middleware.";

const HTTP_MESSAGE =
  'An entry arrived over plain http, and the session cookie is Secure: express-session does not send a Secure cookie over http, so players land logged out. ' +
  "Serve the game over https; behind a proxy that ends TLS, set `app.set('trust proxy', 1)` (the number of proxies) so Express sees X-Forwarded-Proto.";

const FORWARDED_FOR_MESSAGE =
  `Entries arrive with X-Forwarded-For, but Express does not trust the peer that sent it (\`trust proxy\`), so \`req.ip\` is that peer's address: ` +
  "behind a proxy every player shares it, and one client's failed entries (`entry.failureLimit`) lock every player behind that proxy out. " +
  "Set `app.set('trust proxy', 1)` (the number of proxies in front of the app) before the routes. If clients reach the app directly, their X-Forwarded-For is rightly ignored.";

/** True when Express reads the client address from X-Forwarded-For past this request's peer. */
function trustsPeer(req: Request): boolean {
  const trust = req.app?.get('trust proxy fn') as
    ((address: string, hop: number) => boolean) | undefined;
  return typeof trust === 'function' && trust(req.socket.remoteAddress ?? '', 0);
}

/**
 * The check run on each GET to the callback: throws SetupError (500 `server_misconfigured`) when
 * sessions cannot work, warns once about each other finding.
 */
export function createFirstEntryChecks(warn: (message: string) => void): (req: Request) => void {
  const production = process.env.NODE_ENV === 'production';
  return (req) => {
    if (isConnectRedisWithIoredis(req.sessionStore)) {
      warnOnce(warn, CONNECT_REDIS_IOREDIS_MESSAGE);
      throw new SetupError(CONNECT_REDIS_IOREDIS_MESSAGE);
    }
    if (req.session?.cookie?.secure === true && !req.secure) {
      const forwardedProto = req.headers['x-forwarded-proto'];
      const viaHttpsProxy =
        typeof forwardedProto === 'string' &&
        forwardedProto.split(',')[0]!.trim().toLowerCase() === 'https';
      // A warning, not a refusal: with express-session's own `proxy: true` the cookie is still sent.
      warnOnce(warn, viaHttpsProxy ? PROXY_MESSAGE : HTTP_MESSAGE);
    }
    const cookie = production ? req.session?.cookie : undefined;
    const insecureCookie = cookie === undefined ? undefined : insecureCookieMessage(cookie);
    if (insecureCookie !== undefined) warnOnce(warn, insecureCookie);
    if (req.headers['x-forwarded-for'] !== undefined && !trustsPeer(req)) {
      warnOnce(warn, FORWARDED_FOR_MESSAGE);
    }
  };
}
