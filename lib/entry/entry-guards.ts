// The checks every callback request passes before its code is read, built once at creation: the
// setup checks, the embedded cookie-check hop, and the entry context. They run inside the entry
// flow itself (callback.ts), so no path spelling can reach the code without them.
import type { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { COOKIE_CHECK_LOCATION, createCookieCheck, isCookieCheck } from './cookie-check';
import { createEntryContextCheck, type EntryContextCheckSettings } from './entry-context';
import type { PlatformLoginEvents } from '../observability/events';
import { createFirstEntryChecks } from '../setup/entry-setup-checks';

/** The entry guards' settings, derived once at creation (entry-options.ts). */
export interface EntryGuardsSettings {
  /** Where a successful entry lands (`successRedirect`). */
  successRedirect: string;
  embedded: boolean;
  context: EntryContextCheckSettings;
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
  settings: EntryGuardsSettings,
  events: EventEmitter<PlatformLoginEvents>,
  warn: (message: string) => void,
): EntryGuards {
  const entryContext = createEntryContextCheck(settings.context, events, warn);
  const cookieCheck = settings.embedded
    ? createCookieCheck(settings.successRedirect, events)
    : undefined;
  const setupChecks = createFirstEntryChecks(warn);
  return {
    successRedirect: settings.embedded ? COOKIE_CHECK_LOCATION : settings.successRedirect,
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
