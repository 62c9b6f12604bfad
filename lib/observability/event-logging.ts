// The one path from what happened to what is observed: the package's events become log lines,
// metrics, spans and the readiness report here. Subscribed once at creation; of a request that went
// well only its store calls' timings (`storeCall`) pass through here.
import type { EventEmitter } from 'node:events';
import type { PlatformLoginEvents, RequestFailure } from './events';
import { createLogThrottle } from './log-throttle';
import type { PlatformLogger } from './logger';
import { LABELS, type PlatformMetrics } from './metrics';
import type { PlatformHealth } from './platform-health';
import { recordTokenAttemptSpan } from './tracing';

/** The events logged as they come, each at its level with its message and its payload. */
const LOGGED = {
  login: ['info', 'player entered'],
  refresh: ['debug', 'tokens refreshed'],
  refreshFailed: ['warn', 'token refresh failed'],
  loginExpired: ['info', "a login reached its refresh token's end"],
  identitySwitch: ['info', 'a browser switched players'],
  playerJoined: ['info', 'a login joined its player by unionid'],
  unionIdRefused: [
    'warn',
    'the platform answered another unionid for this login: the first one was kept',
  ],
  playerLoggedOut: ['info', 'player logged out everywhere'],
  unreadableRecord: ['warn', 'a stored token record could not be read; treated as logged out'],
} satisfies { [E in keyof PlatformLoginEvents]?: [keyof PlatformLogger, string] };

/**
 * Subscribes logs, metrics, spans and `health` (for `login.ready()`) to `events`. `logger` escapes
 * what came from outside (escapingLogger, util/log-text.ts).
 */
export function observeEvents(
  events: EventEmitter<PlatformLoginEvents>,
  logger: PlatformLogger,
  metrics: PlatformMetrics,
  health: PlatformHealth,
): void {
  for (const [event, [level, message]] of Object.entries(LOGGED)) {
    events.on(event as keyof typeof LOGGED, (e: object) => logger[level]({ event, ...e }, message));
  }
  events.on('login', () => metrics.logins.add(1));
  events.on('refresh', (e) =>
    metrics.refreshes.add(1, LABELS.refresh.get(e.renewed, e.background)),
  );
  events.on('refreshFailed', (e) =>
    metrics.refreshFailures.add(1, LABELS.refreshFailure.get(e.code, e.background)),
  );
  events.on('unreadableRecord', (e) =>
    metrics.unreadableRecords.add(1, LABELS.unreadable.get(e.reason)),
  );
  events.on('codeReplay', (e) => {
    metrics.codeReplays.add(1, LABELS.codeReplay.get(e.sameBrowser));
    const fields = { event: 'codeReplay', ...e };
    if (e.sameBrowser) logger.debug(fields, 'entry repeated by the same browser');
    // A code is claimed before the platform sees it, so this also covers a code the platform
    // refused the first time: "presented before", not "used".
    else logger.warn(fields, 'an entry code presented before came again from another browser');
  });
  events.on('exchangeHold', (e) => {
    metrics.exchangeHolds.add(1, LABELS.exchangeHold.get(e.held));
    const fields = { event: 'exchangeHold', ...e };
    if (e.held)
      logger.warn(
        fields,
        'the token endpoint throttled a code exchange: entries from addresses with failed entries wait, others probe it once a second',
      );
    else logger.info(fields, 'the token endpoint answered a probe: code exchanges resume');
  });
  events.on('logout', (e) => {
    metrics.logouts.add(1);
    const message =
      e.openId === undefined ? 'a session without a login was logged out' : 'player logged out';
    logger.info({ event: 'logout', ...e }, message);
  });

  events.on('tokenAttempt', (attempt) => {
    recordTokenAttemptSpan(attempt);
    const labels = LABELS.token.get(attempt.grant, attempt.outcome);
    metrics.tokenCalls.add(1, labels);
    metrics.tokenDuration.record(attempt.durationMs / 1000, labels);
    if (attempt.httpStatus !== undefined) health.platformLastAnsweredAt = Date.now();
    health.platformLastOutcome = attempt.outcome;
    logger.debug({ event: 'tokenAttempt', ...attempt }, 'token endpoint attempt');
  });
  events.on('lockWait', ({ durationMs, outcome }) => {
    const labels = LABELS.lockWait.get(outcome);
    metrics.lockWaits.add(1, labels);
    metrics.lockWaitDuration.record(durationMs / 1000, labels);
  });
  events.on('storeCall', ({ operation, outcome, durationMs }) => {
    metrics.storeDuration.record(durationMs / 1000, LABELS.storeCall.get(operation, outcome));
    if (outcome === 'error') metrics.storeErrors.add(1, LABELS.storeError.get(operation));
  });
  const logFailure = failureLogger(logger);
  events.on('requestFailed', (failure) => {
    if (failure.part === 'entry' && failure.code !== undefined) {
      metrics.entryFailures.add(1, LABELS.entryFailure.get(failure.code));
    }
    // The token store's failures are counted by `storeCall`; express-session's store's only here.
    if (failure.part === 'session-store')
      metrics.storeErrors.add(1, LABELS.storeError.get('session'));
    logFailure(failure);
  });
}

/** A repeated warning or error is written once per code per this interval (the rest at debug). */
const REPEAT_INTERVAL_MS = 10_000;

/**
 * Each failure at its code's level (lib/errors.ts; `error` for a bug), a warning or an error at most
 * once per code per {@link REPEAT_INTERVAL_MS}.
 */
function failureLogger(logger: PlatformLogger): (failure: RequestFailure) => void {
  const throttle = createLogThrottle(REPEAT_INTERVAL_MS);
  return (failure) => {
    const { logLevel: level, ...failed } = failure;
    const fields = { event: 'requestFailed', ...failed };
    if (level === 'debug') return logger.debug(fields, 'request refused');
    const heldBack = throttle(`${level}:${failure.code ?? failure.message}`);
    const what =
      failure.code === undefined
        ? `unexpected error (${failure.message}) on ${failure.method} ${failure.url}`
        : `${failure.method} ${failure.url} answered ${failure.status} (${failure.code}): ${failure.message}`;
    if (heldBack === undefined) return logger.debug(fields, what);
    const repeated = heldBack > 0 ? { ...fields, heldBack } : fields;
    logger[level](repeated, what);
  };
}

/** Why keys cannot be tracked, by whose limit it is (KeyChangeListener.unavailable's `by`). */
const UNTRACKED: Record<string, string> = {
  refused: 'Redis refused client tracking',
  silent: 'Redis accepted client tracking but its reports never arrive',
  client: 'this Redis client cannot have a tracking connection of its own',
};

/**
 * Logs and counts what a store itself says: a RedisTokenStore emits `recordCacheUnavailable` and
 * `durabilityUnavailable` at most once (warnings), `replicaWait` for each wait for replicas and
 * `reassert` for each write settled after a failover. A store without events says nothing.
 */
export function logStoreEvents(
  store: object,
  logger: PlatformLogger,
  metrics: PlatformMetrics,
): void {
  const storeEvents = store as Partial<Pick<EventEmitter, 'on'>>;
  if (typeof storeEvents.on !== 'function') return;
  const on = <T>(event: string, listener: (e: T) => void): void =>
    void storeEvents.on!.call(store, event, listener);
  on<{ reason: string; by?: string }>('recordCacheUnavailable', (e) =>
    logger.warn(
      { event: 'recordCacheUnavailable', reason: e.reason, by: e.by },
      `${UNTRACKED[e.by ?? 'refused'] ?? UNTRACKED.refused!}: token records are read from Redis on every request (see docs/caching.md)`,
    ),
  );
  on<{ reason: string }>('durabilityUnavailable', (e) =>
    logger.warn(
      { event: 'durabilityUnavailable', reason: e.reason },
      'writes are not waited for on a replica: a failover may lose the latest logins (see docs/operations.md)',
    ),
  );
  on<{ outcome: string; durationMs: number }>('replicaWait', (e) => {
    metrics.replicaWaits.add(1, LABELS.replicaWait.get(e.outcome));
    metrics.replicaWaitDuration.record(e.durationMs / 1000);
    if (e.outcome === 'timeout' || e.outcome === 'failed') {
      logger.warn(
        { event: 'replicaWait', ...e },
        e.outcome === 'timeout'
          ? 'no replica acknowledged in time: the write is on the primary alone'
          : 'Redis went away while waiting for a replica: the write is kept and written again',
      );
    }
  });
  on<{ outcome: string }>('reassert', (e) => {
    metrics.reasserts.add(1, LABELS.reassert.get(e.outcome));
    logger.info({ event: 'reassert', ...e }, 'a write kept through a failover was settled');
  });
}
