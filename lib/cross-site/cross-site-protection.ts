// Protection of the game's pages and state-changing routes, built once at creation: frame-ancestors
// (which pages may frame the game) and CSRF protection for state-changing routes and logout.
import type { RequestHandler } from 'express';
import { createCsrfProtection, withCsrfProtection } from './csrf-protection';
import { createFrameAncestors } from './frame-ancestors';
import { checkPlatformUrls } from '../setup/setup-checks';
import type { FailHandler } from '../http/fail-handler';
import { InvalidOptionError } from '../util/invalid-option-error';

/** The options these parts read (a subset of the parsed platformLogin() options). */
export interface HardeningConfig {
  authUrl: string;
  apiUrl?: string | undefined;
  redirectUri: string;
  platformOrigins?: string[] | undefined;
  gameOrigins?: string[] | undefined;
  embedded: boolean;
}

/** The parts PlatformLogin uses. */
export interface Hardening {
  /** The frame-ancestors middleware; InvalidOptionError without `platformOrigins`. */
  frameAncestors(): RequestHandler;
  /** The CSRF middleware for state-changing routes. */
  csrfProtection(): RequestHandler;
  /** `handler` (logout) behind the CSRF check. */
  protectLogout(handler: RequestHandler): RequestHandler;
}

/** Builds the parts once; throws an InvalidOptionError for an http:// platform URL in production. */
export function createHardening(config: HardeningConfig, fail: FailHandler): Hardening {
  // `embedded` and `entry.context` without `platformOrigins` were refused by the options schema.
  checkPlatformUrls(config);
  const csrf = createCsrfProtection(config.gameOrigins ?? [], fail);
  let frameAncestors: RequestHandler | undefined;

  return {
    frameAncestors() {
      if (config.platformOrigins === undefined) {
        throw new InvalidOptionError(
          "login.frameAncestors() needs the `platformOrigins` option of platformLogin(): the origins of the platform's pages that frame the game.",
          'platformOrigins',
        );
      }
      return (frameAncestors ??= createFrameAncestors(config.platformOrigins));
    },
    csrfProtection: () => csrf,
    protectLogout: (handler) => withCsrfProtection(handler, csrf),
  };
}
