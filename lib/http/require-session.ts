// express-session as the package needs it: mounted in front (its session keys the tokens), its
// calls as promises.
import type { Request } from 'express';
import { sessionMissing } from '../errors';
import { storeFailed } from '../redis/redis-errors';

/** True when `session` is an express-session session (it has `regenerate`). */
export const hasSession = (
  session: Request['session'] | undefined,
): session is Request['session'] =>
  session !== undefined && typeof session.regenerate === 'function';

/** Throws SetupError `ERR_PLATFORM_SESSION_MISSING` (with the fix in its message) when express-session is not mounted. */
export function requireSession(req: Request): void {
  if (!hasSession(req.session)) throw sessionMissing();
}

/** express-session's `call` as a promise; its store's failure is a StoreUnavailableError on `what`. */
export const sessionCall = (req: Request, call: 'regenerate' | 'save' | 'destroy', what: string) =>
  new Promise<void>((resolve, reject) =>
    req.session[call]((err: unknown) =>
      err ? reject(storeFailed({ store: 'session store', what }, err)) : resolve(),
    ),
  );
