// Ends a player's login: deletes the token record, destroys the session and clears its cookie.
// POST only, wherever it is mounted: a GET logout could be started by any page (an `<img>`).
import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { FailHandler } from './fail-handler';
import type { EventEmitter } from 'node:events';
import { methodNotAllowed } from '../errors';
import type { PlatformLoginEvents } from '../observability/events';
import { hashSessionId } from '../core/hash';
import { requireSession, sessionCall } from './require-session';
import type { StoreEngine } from '../core/store-engine';
import { sameSitePath } from '../util/same-site-path';
import { parseOptions, type OptionsSchema } from '../util/parse-options';

const logoutShape = {
  /** Where to send the browser afterwards (303). A path on this site. Defaults to none: 204 No Content. */
  redirectTo: sameSitePath.optional(),
  /** The session cookie's name as given to express-session. Defaults to `'connect.sid'`. */
  cookieName: z.string({ error: 'must be a non-empty string' }).min(1).default('connect.sid'),
};

const logoutOptionsSchema: OptionsSchema<typeof logoutShape> = z.strictObject(logoutShape);

/** Options of `login.logout()`. */
export type LogoutOptions = z.input<typeof logoutOptionsSchema>;

export interface LogoutDeps {
  store: StoreEngine;
  events: EventEmitter<PlatformLoginEvents>;
  fail: FailHandler;
}

/** The handler; its options are parsed here, once (a same-site `redirectTo`, the cookie name defaulted). */
export function createLogoutHandler(
  deps: LogoutDeps,
  options: LogoutOptions | undefined,
): RequestHandler {
  const { cookieName, redirectTo } = parseOptions(logoutOptionsSchema, options, 'login.logout()');

  return async function platformLogout(req, res, next) {
    try {
      if (req.method !== 'POST') throw methodNotAllowed('POST');
      requireSession(req);
      const sessionKey = hashSessionId(req.sessionID);
      const openId = req.session.platformLogin?.openId;
      await deps.store.records.delete(sessionKey, { logout: true });
      const cookie = req.session.cookie;
      await sessionCall(req, 'destroy', 'destroying the session');
      res.clearCookie(cookieName, {
        path: cookie?.path ?? '/',
        domain: cookie?.domain,
        secure: cookie?.secure === true,
        sameSite: cookie?.sameSite,
        // A Partitioned (CHIPS) cookie is only cleared by a Set-Cookie that is Partitioned too.
        partitioned: (cookie as { partitioned?: boolean } | undefined)?.partitioned === true,
        httpOnly: true,
      });
      res.setHeader('Cache-Control', 'no-store');
      deps.events.emit('logout', { openId, sessionHash: sessionKey });
      if (redirectTo !== undefined) res.redirect(303, redirectTo);
      else res.status(204).end();
    } catch (error) {
      deps.fail(error, req, res, next);
    }
  };
}
