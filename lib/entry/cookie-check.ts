// Detects a browser that refuses the session cookie: in embedded mode an entry lands first on
// `<callback>?cookie_check=1`, and one that comes back without its session gets a diagnostic page
// instead of looping through the platform, a code burnt each round (docs/embedded.md).
import type { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { cookiesRefused } from '../errors';
import type { PlatformLoginEvents } from '../observability/events';

/** The one-shot query parameter of the landing hop. */
const COOKIE_CHECK_PARAMETER = 'cookie_check';

/**
 * Where the callback sends a browser after an entry in embedded mode: a query-only relative
 * reference (RFC 3986 section 4.2), so it resolves to the callback's own public path whatever
 * prefix or proxy sits in front of it.
 */
export const COOKIE_CHECK_LOCATION = `?${COOKIE_CHECK_PARAMETER}=1`;

/** True for the landing hop: the marker and no `code` or `error` (those are entries). */
export function isCookieCheck(params: URLSearchParams): boolean {
  return params.has(COOKIE_CHECK_PARAMETER) && !params.has('code') && !params.has('error');
}

/**
 * Answers the landing hop: 303 to `successRedirect` when the session came back with its login,
 * else throws RequestRefusedError `ERR_PLATFORM_COOKIES_REFUSED` (the diagnostic page) and emits `cookiesRefused`.
 */
export function createCookieCheck(
  successRedirect: string,
  events: EventEmitter<PlatformLoginEvents>,
): (req: Request, res: Response) => void {
  return (req, res) => {
    if (req.session.platformLogin === undefined) {
      const dest = req.headers['sec-fetch-dest'];
      events.emit('cookiesRefused', { framed: dest === 'iframe' || dest === 'frame' });
      throw cookiesRefused();
    }
    landAt(res, successRedirect);
  };
}

/** Sends the entered player on (303) with no cache, and no Referer carrying the entry's URL. */
export function landAt(res: Response, path: string): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.redirect(303, path);
}
