// The warning a store's `recordCacheUnavailable` is logged with names whose limit keeps records out
// of memory: Redis refusing client tracking, Redis accepting it without reporting, or the Redis
// client having no tracking connection of its own (node-redis 5's Sentinel).
import { EventEmitter } from 'node:events';
import { logStoreEvents } from '../../lib/observability/event-logging';
import type { PlatformMetrics } from '../../lib/observability/metrics';

function warningsFor(by: string | undefined): string[] {
  const warnings: string[] = [];
  const store = new EventEmitter();
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (_fields: object, message: string) => void warnings.push(message),
    error: () => undefined,
  };
  logStoreEvents(store, logger, {} as PlatformMetrics);
  store.emit('recordCacheUnavailable', { reason: 'why', ...(by === undefined ? {} : { by }) });
  return warnings;
}

test.each([
  ['refused', /^Redis refused client tracking:/],
  ['silent', /^Redis accepted client tracking but its reports never arrive:/],
  ['client', /^this Redis client cannot have a tracking connection of its own:/],
  // A store of an older release says no `by`: Redis refused.
  [undefined, /^Redis refused client tracking:/],
])('recordCacheUnavailable by %s is worded by its reason', (by, wording) => {
  const warnings = warningsFor(by);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(wording);
  expect(warnings[0]).toMatch(/read from Redis on every request/);
});
