// The hardening parts of one PlatformLogin, built once at creation: the guards in front of the
// callback (setup checks, the cookie-check landing hop, the entry context), frame-ancestors, and
// CSRF protection for state-changing routes and logout.
import type { EventEmitter } from 'node:events';
import { Router, type RequestHandler } from 'express';
import { COOKIE_CHECK_LOCATION, createCookieCheck, isCookieCheck } from './cookie-check';
import { createCsrfProtection, withCsrfProtection } from './csrf-protection';
import { createEntryContextCheck, type entryContextSchema } from './entry-context';
import type { PlatformLoginEvents } from '../observability/events';
import { createFirstEntryChecks } from './entry-setup-checks';
import { createFrameAncestors } from './frame-ancestors';
import type { PlatformLogger } from '../observability/logger';
import { checkPlatformUrls } from './setup-checks';
import type { FailHandler } from './fail-handler';
import { InvalidOptionError } from '../util/invalid-option-error';
import type { z } from 'zod';

/** The options the hardening parts read (a subset of the parsed platformLogin() options). */
export interface HardeningConfig {
  authUrl: string;
  apiUrl?: string | undefined;
  redirectUri: string;
  successRedirect: string;
  platformOrigins?: string[] | undefined;
  gameOrigins?: string[] | undefined;
  entryContext?: z.output<typeof entryContextSchema> | undefined;
  embedded: boolean;
  /** The app's own logger, when it gave one: setup warnings go there instead of console.warn. */
  logger?: PlatformLogger | undefined;
}

/** The parts PlatformLogin uses. */
export interface Hardening {
  /** Where the callback sends the browser after an entry (the cookie-check hop in embedded mode). */
  readonly successRedirect: string;
  /** `router` behind the entry guards. */
  guardCallback(router: Router): Router;
  /** The frame-ancestors middleware; InvalidOptionError without `platformOrigins`. */
  frameAncestors(): RequestHandler;
  /** The CSRF middleware for state-changing routes. */
  csrfProtection(): RequestHandler;
  /** `handler` (logout) behind the CSRF check. */
  protectLogout(handler: RequestHandler): RequestHandler;
}

/** Builds the parts once; throws an InvalidOptionError for an http:// platform URL in production. */
export function createHardening(
  config: HardeningConfig,
  events: EventEmitter<PlatformLoginEvents>,
  fail: FailHandler,
): Hardening {
  // `embedded` and `entryContext` without `platformOrigins` were refused by the options schema.
  checkPlatformUrls(config);
  const entryContext = createEntryContextCheck(
    config.entryContext,
    config.platformOrigins,
    config.embedded,
    events,
  );
  const cookieCheck = config.embedded
    ? createCookieCheck(config.successRedirect, events)
    : undefined;
  const logger = config.logger;
  const firstEntryChecks = createFirstEntryChecks(
    logger === undefined ? undefined : (message) => logger.warn({}, message),
  );
  const csrf = createCsrfProtection(config.gameOrigins ?? [], fail);
  let frameAncestors: RequestHandler | undefined;

  const guard: RequestHandler = (req, res, next) => {
    if (req.method !== 'GET' || req.path !== '/') return next();
    try {
      firstEntryChecks(req);
      if (cookieCheck === undefined && entryContext === undefined) return next();
      const queryStart = req.originalUrl.indexOf('?');
      const params = new URLSearchParams(
        queryStart === -1 ? '' : req.originalUrl.slice(queryStart + 1),
      );
      if (cookieCheck !== undefined && isCookieCheck(params)) return cookieCheck(req, res);
      if (entryContext !== undefined && params.has('code')) entryContext(req);
      next();
    } catch (error) {
      fail(error, req, res, next);
    }
  };

  return {
    successRedirect: config.embedded ? COOKIE_CHECK_LOCATION : config.successRedirect,
    guardCallback(router) {
      const guarded = Router();
      guarded.use(guard, router);
      return guarded;
    },
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
