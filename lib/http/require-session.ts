// express-session must run before the package; without it there is no session to key tokens by.
import type { Request } from 'express';
import { SessionMissingError } from '../errors';

/** Throws SessionMissingError (with the fix in its message) when express-session is not mounted. */
export function requireSession(req: Request): void {
  if (req.session === undefined || typeof req.session.regenerate !== 'function')
    throw new SessionMissingError();
}
