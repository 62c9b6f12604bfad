// Turns the package's events, token-endpoint attempts, lock waits and answered errors into log
// lines, metrics and spans. Subscribed once at creation; nothing here runs on a request that went well.
import type { EventEmitter } from 'node:events';
import type { Request } from 'express';
import { isPlatformLoginError } from '../errors';
import type { LockWaitOutcome, PlatformLoginEvents } from './events';
import { redactUrl, type PlatformLogger } from './logger';
import { LABELS, type PlatformMetrics } from './metrics';
import type { PlatformHealth } from './platform-health';
import { tokenAttemptSpans } from './tracing';
import type { TokenAttempt } from '../client/token-client-options';

export function observeEvents(
  events: EventEmitter<PlatformLoginEvents>,
  logger: PlatformLogger,
  metrics: PlatformMetrics,
): void {
  events.on('login', (e) => {
    metrics.logins.add(1);
    logger.info(
      { event: 'login', openId: e.openId, sessionHash: e.sessionHash, durationMs: e.durationMs },
      'player entered',
    );
  });
  events.on('refresh', (e) => {
    metrics.refreshes.add(1, LABELS.refresh.get(e.renewed, e.background));
    logger.debug({ event: 'refresh', ...e }, 'tokens refreshed');
  });
  events.on('refreshFailed', (e) => {
    metrics.refreshFailures.add(1, LABELS.refreshFailure.get(e.code, e.background));
    logger.warn({ event: 'refreshFailed', ...e }, 'token refresh failed');
  });
  events.on('codeReplay', (e) => {
    metrics.codeReplays.add(1, LABELS.codeReplay.get(e.sameBrowser));
    const fields = { event: 'codeReplay', ...e };
    if (e.sameBrowser) logger.debug(fields, 'entry repeated by the same browser');
    else logger.warn(fields, 'a used entry code was presented by another browser');
  });
  events.on('identitySwitch', (e) =>
    logger.info({ event: 'identitySwitch', ...e }, 'a browser switched players'),
  );
  events.on('logout', (e) => {
    metrics.logouts.add(1);
    logger.info({ event: 'logout', ...e }, 'player logged out');
  });
  events.on('playerLoggedOut', (e) =>
    logger.info({ event: 'playerLoggedOut', ...e }, 'player logged out everywhere'),
  );
  events.on('unreadableRecord', (e) => {
    metrics.unreadableRecords.add(1, LABELS.unreadable.get(e.reason));
    logger.warn(
      { event: 'unreadableRecord', ...e },
      'a stored token record could not be read; treated as logged out',
    );
  });
}

/**
 * Records one token-endpoint attempt (metrics, a span, a debug line) and remembers when the
 * platform last answered.
 */
export function tokenAttemptObserver(
  logger: PlatformLogger,
  metrics: PlatformMetrics,
  health: PlatformHealth,
): (attempt: TokenAttempt) => void {
  const recordSpan = tokenAttemptSpans();
  return (attempt) => {
    recordSpan(attempt);
    const labels = LABELS.token.get(attempt.grant, attempt.outcome);
    metrics.tokenCalls.add(1, labels);
    metrics.tokenDuration.record(attempt.durationMs / 1000, labels);
    if (attempt.httpStatus !== undefined) health.platformLastAnsweredAt = Date.now();
    health.platformLastOutcome = attempt.outcome;
    logger.debug({ event: 'tokenEndpoint', ...attempt }, 'token endpoint attempt');
  };
}

export function lockWaitObserver(
  metrics: PlatformMetrics,
): (durationMs: number, outcome: LockWaitOutcome) => void {
  return (durationMs, outcome) => {
    const labels = LABELS.lockWait.get(outcome);
    metrics.lockWaits.add(1, labels);
    metrics.lockWaitDuration.record(durationMs / 1000, labels);
  };
}

/** Logs an error the package answered: request mistakes at debug, trouble at warn, bugs at error. */
export function logAnsweredError(logger: PlatformLogger, err: unknown, req: Request): void {
  const url = redactUrl(req.originalUrl ?? req.url ?? '');
  if (!isPlatformLoginError(err)) {
    logger.error(
      { method: req.method, url, error: err instanceof Error ? err.name : typeof err },
      'unexpected error',
    );
    return;
  }
  const fields = {
    method: req.method,
    url,
    code: err.code,
    status: err.status,
    message: err.message,
  };
  if (err.status >= 500) logger.warn(fields, 'request failed');
  else logger.debug(fields, 'request refused');
}
