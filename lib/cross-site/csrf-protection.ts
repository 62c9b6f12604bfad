// CSRF protection for state-changing routes once the session cookie is SameSite=None (embedded
// mode): the browser's own headers, which a page cannot forge, say where a request comes from; no
// token, nothing in the session (docs/embedded.md).
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler } from 'express';
import { crossOriginRequest } from '../errors';
import type { FailHandler } from '../http/fail-handler';
import { single } from './origins';

/** Methods that must not change state (RFC 9110 safe methods): never checked. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/**
 * True when the browser says the request was started by a page of another origin, whatever its
 * method. A WebSocket handshake is a GET that a page of any site can start with the player's cookie
 * (cross-site WebSocket hijacking), so sockets use this as it is.
 */
export function isCrossOrigin(
  headers: IncomingHttpHeaders,
  trustedOrigins: ReadonlySet<string>,
): boolean {
  const site = single(headers['sec-fetch-site']);
  const origin = single(headers.origin);
  // `none`: started by the user outside any page, which no forger can do.
  if (site === 'same-origin' || site === 'none') return false;
  if (origin !== undefined && trustedOrigins.has(origin)) return false;
  if (site !== undefined) return true; // same-site or cross-site, from an origin not trusted
  if (origin === undefined) return false; // not a browser, or one too old to send either header
  // `Origin: null` (sandboxed frames, data: URLs) never names this host.
  const host = single(headers.host);
  return !URL.canParse(origin) || host === undefined || new URL(origin).host !== host;
}

/** The check as middleware; refusals go to `fail` as RequestRefusedError `ERR_PLATFORM_CROSS_ORIGIN` (403). */
export function createCsrfProtection(
  trusted: ReadonlySet<string>,
  fail: FailHandler,
): RequestHandler {
  return function csrfProtection(req, res, next) {
    if (!SAFE_METHODS.has(req.method) && isCrossOrigin(req.headers, trusted)) {
      fail(crossOriginRequest(), req, res, next);
    } else {
      next();
    }
  };
}

/** `handler` behind the check (for logout). */
export function withCsrfProtection(handler: RequestHandler, check: RequestHandler): RequestHandler {
  return function csrfProtected(req, res, next) {
    void check(req, res, (err?: unknown) => {
      if (err !== undefined) next(err);
      else void handler(req, res, next);
    });
  };
}
