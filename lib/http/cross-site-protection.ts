// Protection of the game's pages and state-changing routes, built once at creation: frame-ancestors
// (which pages may frame the game) and CSRF protection for state-changing routes and logout.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createCsrfProtection, withCsrfProtection } from './csrf-protection';
import { createFrameAncestors } from './frame-ancestors';
import { checkPlatformUrls } from './setup-checks';

/** The options these parts read (a subset of the parsed platformLogin() options). */
export interface HardeningConfig {
  authUrl: string;
  apiUrl?: string | undefined;
  redirectUri: string;
  platformOrigins?: string[] | undefined;
  gameOrigins?: string[] | undefined;
  embedded: boolean;
}

type Fail = (err: unknown, req: Request, res: Response, next: NextFunction) => void;

/** The parts PlatformLogin uses. */
export interface Hardening {
  /** The frame-ancestors middleware; TypeError without `platformOrigins`. */
  frameAncestors(): RequestHandler;
  /** The CSRF middleware for state-changing routes. */
  csrfProtection(): RequestHandler;
  /** `handler` (logout) behind the CSRF check. */
  protectLogout(handler: RequestHandler): RequestHandler;
}

/** Builds the parts once; throws a TypeError naming the option on a wrong combination. */
export function createHardening(config: HardeningConfig, fail: Fail): Hardening {
  checkPlatformUrls(config);
  if (config.embedded && config.platformOrigins === undefined) {
    throw new TypeError(
      "platformLogin(): `platformOrigins` is required when `embedded` is true: it limits which pages may frame the game (frame-ancestors), e.g. ['https://platform.example'].",
    );
  }
  const csrf = createCsrfProtection(config.gameOrigins ?? [], fail);
  let frameAncestors: RequestHandler | undefined;

  return {
    frameAncestors() {
      if (config.platformOrigins === undefined) {
        throw new TypeError(
          "login.frameAncestors() needs the `platformOrigins` option of platformLogin(): the origins of the platform's pages that frame the game.",
        );
      }
      return (frameAncestors ??= createFrameAncestors(config.platformOrigins));
    },
    csrfProtection: () => csrf,
    protectLogout: (handler) => withCsrfProtection(handler, csrf),
  };
}
