// How a request the package could not serve ends: the error is logged, then answered as documented
// (`handleErrors: true`) or passed to `next(err)` for the app's own error middleware.
import type { EventEmitter } from 'node:events';
import type { ErrorRequestHandler, NextFunction, Request, Response } from 'express';
import { hasCode, isPlatformLoginError } from '../errors';
import { isRedisOutage, storeFailed } from '../redis/redis-errors';
import type { PlatformLoginEvents, RequestFailure } from '../observability/events';
import type { PlatformLogger } from '../observability/logger';
import { requestFailure } from '../observability/request-failure';
import { respondWithError } from './respond-error';
import { hasSession } from './require-session';

/** Ends a failed request; every handler of the package calls it from its `catch`. */
export type FailHandler = (err: unknown, req: Request, res: Response, next: NextFunction) => void;

export interface FailHandlerSettings {
  /** Where `requestFailed` goes (logged and counted by its subscribers). */
  events: EventEmitter<PlatformLoginEvents>;
  /** The login's logger (the `logger` option, or the default: the console for errors). */
  logger: PlatformLogger;
  handleErrors: boolean;
  /** Where a player without a login enters again (`successRedirect`): linked from the 401 page. */
  homePath: string;
}

/**
 * The FailHandlers of a PlatformLogin: one for its entries (the callback), one for its other
 * handlers; the event says which. A missing express-session is a setup mistake that must be seen
 * without `DEBUG` set: it is reported once as an error on the login's logger. `errors` is
 * `login.errorHandler()`.
 */
export function createFailHandlers(
  settings: FailHandlerSettings,
): Record<'entry' | 'request', FailHandler> & { errors: ErrorRequestHandler } {
  const { events, logger, handleErrors, homePath } = settings;
  /** Errors told as `requestFailed` by the package's handlers, not to be told again by `errors`. */
  const reported = new WeakSet<object>();
  let reportedSessionMissing = false;
  const failHandler =
    (part: RequestFailure['part']): FailHandler =>
    (err, req, res, next) => {
      events.emit('requestFailed', requestFailure(err, req, part));
      if (typeof err === 'object' && err !== null) reported.add(err);
      if (hasCode(err, 'ERR_PLATFORM_SESSION_MISSING') && !reportedSessionMissing) {
        reportedSessionMissing = true;
        logger.error({ code: err.code }, err.message);
      }
      if (handleErrors && isPlatformLoginError(err)) respondWithError(err, req, res, homePath);
      else next(err);
    };
  const errors: ErrorRequestHandler = (err, req, res, next) => {
    // A session store (connect-redis) failing inside express-session, before the package ran.
    const failure = isPlatformLoginError(err)
      ? err
      : isRedisOutage(err)
        ? storeFailed({ store: 'session store', what: 'the request' }, err)
        : undefined;
    if (failure === undefined) return next(err);
    if (!reported.has(err as object)) {
      // No session on the request: express-session's store failed before any handler ran.
      const part = hasSession(req.session) ? 'request' : 'session-store';
      events.emit('requestFailed', requestFailure(failure, req, part));
    }
    respondWithError(failure, req, res, homePath);
  };
  return { entry: failHandler('entry'), request: failHandler('request'), errors };
}
