// The checks every callback request passes before its code is read, built once at creation: the
// setup checks, the embedded cookie-check hop, and the entry context. They run inside the entry
// flow itself (callback.ts), so no path spelling can reach the code without them.
import type { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { COOKIE_CHECK_LOCATION, createCookieCheck, isCookieCheck } from './cookie-check';
import { createEntryContextCheck, type entryContextSchema } from './entry-context';
import type { PlatformLoginEvents } from '../observability/events';
import { createFirstEntryChecks } from '../setup/entry-setup-checks';
import type { z } from 'zod';

/** The options the entry guards read (a subset of the parsed platformLogin() options). */
export interface EntryGuardsConfig {
  successRedirect: string;
  platformOrigins?: string[] | undefined;
  entryContext?: z.output<typeof entryContextSchema> | undefined;
  embedded: boolean;
}

/** The guards of one callback. */
export interface EntryGuards {
  /** Where an entry sends the browser (the cookie-check hop in embedded mode). */
  readonly successRedirect: string;
  /**
   * Runs the guards on a GET to the callback, with its query. Resolves `true` when the request
   * was answered here (the cookie-check hop); throws when it must be refused (setup problem,
   * foreign entry context). `false`: go on to read and redeem the code.
   */
  check(req: Request, res: Response, params: URLSearchParams): boolean;
}

/** Builds the guards once; `warn` takes the setup and start-up warnings. */
export function createEntryGuards(
  config: EntryGuardsConfig,
  events: EventEmitter<PlatformLoginEvents>,
  warn: (message: string) => void,
): EntryGuards {
  const entryContext = createEntryContextCheck(
    config.entryContext,
    config.platformOrigins,
    config.embedded,
    events,
    warn,
  );
  const cookieCheck = config.embedded
    ? createCookieCheck(config.successRedirect, events)
    : undefined;
  const setupChecks = createFirstEntryChecks(warn);
  return {
    successRedirect: config.embedded ? COOKIE_CHECK_LOCATION : config.successRedirect,
    check(req, res, params) {
      setupChecks(req);
      if (cookieCheck !== undefined && isCookieCheck(params)) {
        cookieCheck(req, res);
        return true;
      }
      // Every request, with a code or not: what does not pass here neither counts nor reaches a code.
      entryContext(req);
      return false;
    },
  };
}
