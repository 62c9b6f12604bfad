// express-session must run before the package; without it there is no session to key tokens by.
import type { Request } from 'express';
import { sessionMissing } from '../errors';

/** True when `session` is an express-session session (it has `regenerate`). */
export const hasSession = (
  session: Request['session'] | undefined,
): session is Request['session'] =>
  session !== undefined && typeof session.regenerate === 'function';

/** Throws SetupError `ERR_PLATFORM_SESSION_MISSING` (with the fix in its message) when express-session is not mounted. */
export function requireSession(req: Request): void {
  if (!hasSession(req.session)) throw sessionMissing();
}
