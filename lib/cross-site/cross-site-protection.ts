// Protection of the game's pages and state-changing routes, built once at creation: frame-ancestors
// (which pages may frame the game) and CSRF protection for state-changing routes and logout.
import type { RequestHandler } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { createCsrfProtection, isCrossOrigin, withCsrfProtection } from './csrf-protection';
import { createFrameAncestors } from './frame-ancestors';
import type { FailHandler } from '../http/fail-handler';
import { invalidOption } from '../errors';

/** The parts PlatformLogin uses. */
export interface Hardening {
  /** The frame-ancestors middleware; a SetupError (`ERR_PLATFORM_INVALID_OPTION`) without `platformOrigins`. */
  frameAncestors(): RequestHandler;
  /** The CSRF middleware for state-changing routes. */
  csrfProtection(): RequestHandler;
  /** `handler` (logout) behind the CSRF check. */
  protectLogout(handler: RequestHandler): RequestHandler;
  /** Whether a page of an origin other than this one and `gameOrigins` started the request (sockets' handshake). */
  isCrossOrigin(headers: IncomingHttpHeaders): boolean;
}

/**
 * Builds the parts once from the parsed `gameOrigins` (trusted by CSRF protection and sockets) and
 * `platformOrigins` (the only pages that may frame the game; empty when none was given).
 */
export function createHardening(
  trusted: readonly string[] | undefined,
  platformOrigins: readonly string[],
  fail: FailHandler,
): Hardening {
  const gameOrigins: ReadonlySet<string> = new Set(trusted);
  const csrf = createCsrfProtection(gameOrigins, fail);
  let frameAncestors: RequestHandler | undefined;

  return {
    frameAncestors() {
      // Refused when the app asks for it, not at creation: without the middleware the option is not needed.
      if (platformOrigins.length === 0) {
        throw invalidOption(
          "login.frameAncestors() needs the `platformOrigins` option of platformLogin(): the origins of the platform's pages that frame the game.",
          'platformOrigins',
        );
      }
      return (frameAncestors ??= createFrameAncestors(platformOrigins));
    },
    csrfProtection: () => csrf,
    protectLogout: (handler) => withCsrfProtection(handler, csrf),
    isCrossOrigin: (headers) => isCrossOrigin(headers, gameOrigins),
  };
}
