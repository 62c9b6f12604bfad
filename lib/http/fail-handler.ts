// How a request the package could not serve ends: the error is logged, then answered as documented
// (`handleErrors: true`) or passed to `next(err)` for the app's own error middleware.
import type { NextFunction, Request, Response } from 'express';
import { isPlatformLoginError, SessionMissingError } from '../errors';
import { logAnsweredError } from '../observability/event-logging';
import type { PlatformLogger } from '../observability/logger';
import { respondWithError } from './respond-error';

/** Ends a failed request; every handler of the package calls it from its `catch`. */
export type FailHandler = (err: unknown, req: Request, res: Response, next: NextFunction) => void;

export interface FailHandlerSettings {
  /** The logger in use, for the answered error. */
  logger: PlatformLogger;
  /** The app's own logger, when it gave one (the `logger` option). */
  appLogger: PlatformLogger | undefined;
  handleErrors: boolean;
  /** Where a player without a login enters again (`successRedirect`): linked from the 401 page. */
  homePath?: string;
}

/**
 * The one FailHandler of a PlatformLogin. A missing express-session is a setup mistake that must be
 * seen without `DEBUG` set: it is reported once as an error on the app's logger, or on the console
 * when the app gave none.
 */
export function createFailHandler(settings: FailHandlerSettings): FailHandler {
  const { logger, appLogger, handleErrors, homePath } = settings;
  let reportedSessionMissing = false;
  return (err, req, res, next) => {
    logAnsweredError(logger, err, req);
    if (err instanceof SessionMissingError && !reportedSessionMissing) {
      reportedSessionMissing = true;
      const message = `[express-platform-login] ${err.message}`;
      if (appLogger !== undefined) appLogger.error({ code: err.code }, message);
      else console.error(message);
    }
    if (handleErrors && isPlatformLoginError(err)) respondWithError(err, req, res, homePath);
    else next(err);
  };
}
