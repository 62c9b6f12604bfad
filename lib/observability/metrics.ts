// The package's metrics, through the OpenTelemetry metrics API: a no-op until the app registers an
// SDK. Instruments are created once; attributes are small fixed sets (grant, outcome, operation) —
// never a token, a code, a secret or a session id.
import {
  metrics,
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
} from '@opentelemetry/api';

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const PACKAGE_NAME = 'express-platform-login';
/** Read once from package.json (two levels above lib/observability/ and dist/observability/). */
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** Every instrument the package records to. */
export class PlatformMetrics {
  /** `epl.token_endpoint.calls` {grant, outcome}: one per attempt, retries included. */
  readonly tokenCalls: Counter;
  /** `epl.token_endpoint.duration` (ms) {grant, outcome}. */
  readonly tokenDuration: Histogram;
  /** `epl.refreshes` {renewed: same-token | new-token, background}. */
  readonly refreshes: Counter;
  /** `epl.refresh.failures` {code, background}. */
  readonly refreshFailures: Counter;
  /** `epl.lock.waits` {outcome: refreshed-elsewhere | took-over | gave-up | logged-out}. */
  readonly lockWaits: Counter;
  /** `epl.lock.wait_duration` (ms) {outcome}. */
  readonly lockWaitDuration: Histogram;
  /** `epl.code_replays` {same_browser}. */
  readonly codeReplays: Counter;
  /** `epl.store.errors` {operation}. */
  readonly storeErrors: Counter;
  /** `epl.store.duration` (ms) {operation, outcome}. */
  readonly storeDuration: Histogram;
  /** `epl.records.unreadable` {reason}. */
  readonly unreadableRecords: Counter;
  /** `epl.logins` and `epl.logouts`. */
  readonly logins: Counter;
  readonly logouts: Counter;

  constructor(provider: MeterProvider = metrics) {
    const meter = provider.getMeter(PACKAGE_NAME, PACKAGE_VERSION);
    const ms = { unit: 'ms' };
    this.tokenCalls = meter.createCounter('epl.token_endpoint.calls', {
      description: 'Token endpoint attempts by grant and outcome',
    });
    this.tokenDuration = meter.createHistogram('epl.token_endpoint.duration', {
      ...ms,
      description: 'Token endpoint attempt latency',
    });
    this.refreshes = meter.createCounter('epl.refreshes', {
      description: 'Successful token refreshes',
    });
    this.refreshFailures = meter.createCounter('epl.refresh.failures', {
      description: 'Failed token refreshes',
    });
    this.lockWaits = meter.createCounter('epl.lock.waits', {
      description: 'Requests that waited for another holder of the refresh lock',
    });
    this.lockWaitDuration = meter.createHistogram('epl.lock.wait_duration', {
      ...ms,
      description: 'How long requests waited for the refresh lock',
    });
    this.codeReplays = meter.createCounter('epl.code_replays', {
      description: 'Entry codes presented again',
    });
    this.storeErrors = meter.createCounter('epl.store.errors', {
      description: 'Token store failures',
    });
    this.storeDuration = meter.createHistogram('epl.store.duration', {
      ...ms,
      description: 'Token store call latency',
    });
    this.unreadableRecords = meter.createCounter('epl.records.unreadable', {
      description: 'Stored records that did not decrypt or parse (read as logged out)',
    });
    this.logins = meter.createCounter('epl.logins', { description: 'Players who entered' });
    this.logouts = meter.createCounter('epl.logouts', { description: 'Players who logged out' });
  }
}

/** Attribute sets are shared frozen objects where they can be, so recording allocates nothing. */
export const attributes = (values: Attributes): Attributes => Object.freeze(values);
