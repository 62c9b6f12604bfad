// The package's metrics, through the OpenTelemetry metrics API: a no-op until the app registers an
// SDK. Instruments are created once; attributes are small fixed sets (grant, outcome, operation) —
// never a token, a code, a secret, a session id or an openId.
//
// Naming convention (follow it for new instruments; docs/metrics.md lists them all):
// - `epl.<part>.<what>`, lower case, dots between parts, underscores inside a word
//   (`epl.token_endpoint.calls`); Prometheus shows dots as underscores.
// - Counters: a plural noun, no unit, no `_total` (the Prometheus exporter appends it).
// - Durations: histograms in seconds (`unit: 's'`) whose name ends in `_seconds`
//   (`epl.store.duration_seconds`): exporter-prometheus 0.223 writes `# UNIT … s` but appends
//   nothing to the name, and newer exporters append `_seconds` only when it is not already there.
//   Bucket boundaries fit the instrument (`advice.explicitBucketBoundaries`), never the SDK's
//   default (0–10000, made for milliseconds).
// - Every counter series with a known label set is started at zero at creation (`add(0, labels)`),
//   so `rate(…)` and alerts have a series before the first event. Labels are built here, once, as
//   shared frozen objects: recording allocates nothing, and a series seeded at zero is the very
//   series later recorded to (same keys, same value types).
import {
  metrics,
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
} from '@opentelemetry/api';
import { codesOf, TOKEN_ENDPOINT_FAILURE_CODES } from '../errors';
import { TOKEN_GRANTS } from '../client/token-response';
import {
  LOCK_WAIT_OUTCOMES,
  RENEWALS,
  STORE_CALL_OUTCOMES,
  STORE_OPERATIONS,
  UNREADABLE_REASONS,
} from './events';
import { PACKAGE_NAME, PACKAGE_VERSION } from './package-identity';

/** Attribute sets are shared frozen objects where they can be, so recording allocates nothing. */
const attributes = (values: Attributes): Attributes => Object.freeze(values);

/** What the bucket boundaries of the duration histograms are fitted to. */
export interface MetricsSettings {
  /** The token client's per-attempt deadline: the slowest token-endpoint attempt. */
  tokenTimeoutMs: number;
  /** The longest a request waits for another holder of the refresh lock. */
  maxLockWaitMs: number;
}

/**
 * Store calls: a Redis round trip is ~0.1–1 ms, a memory store far less; the top bucket is past
 * the store's deadline (`operationTimeoutMs`, 1.5 s by default).
 */
const STORE_BUCKETS: readonly number[] = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

/** 1–2.5–5 steps per decade, in seconds. */
const LADDER = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500,
];

/** The ladder from `from` seconds up to `limitMs`, ending exactly at the limit. */
function bucketsUpTo(from: number, limitMs: number): number[] {
  const limit = limitMs / 1000;
  return [...LADDER.filter((bound) => bound >= from && bound < limit), limit];
}

/** `grant` × `outcome` of token-endpoint attempts: `ok` and every error code the client ends with. */
const TOKEN_OUTCOMES = ['ok', ...TOKEN_ENDPOINT_FAILURE_CODES] as const;
/** The codes a refresh fails with (see core/refresh.ts), and those an entry is refused or fails with. */
const REFRESH_FAILURE_CODES = codesOf('refresh');
const ENTRY_FAILURE_CODES = codesOf('entry');
/** `epl.store.errors`'s operation for express-session's store failing in front of the package. */
const SESSION_STORE = 'session';

/** A table of shared label sets, built once, with a fallback for a value not known in advance. */
class LabelTable {
  readonly #known = new Map<string, Attributes>();
  constructor(private readonly build: (...values: Array<string | boolean>) => Attributes) {}
  seed(...values: Array<string | boolean>): Attributes {
    const labels = attributes(this.build(...values));
    this.#known.set(values.join('\u0000'), labels);
    return labels;
  }
  get(...values: Array<string | boolean>): Attributes {
    return this.#known.get(values.join('\u0000')) ?? this.build(...values);
  }
  /** The label sets seeded, in the order they were. */
  known(): Attributes[] {
    return [...this.#known.values()];
  }
}

/** Labels of each counter, shared by the seeding at zero and every recording. */
export const LABELS = {
  token: new LabelTable((grant, outcome) => ({ grant, outcome })),
  refresh: new LabelTable((renewed, background) => ({ renewed, background })),
  refreshFailure: new LabelTable((code, background) => ({ code, background })),
  lockWait: new LabelTable((outcome) => ({ outcome })),
  codeReplay: new LabelTable((sameBrowser) => ({ same_browser: sameBrowser })),
  exchangeHold: new LabelTable((held) => ({ held })),
  unreadable: new LabelTable((reason) => ({ reason })),
  storeCall: new LabelTable((operation, outcome) => ({ operation, outcome })),
  storeError: new LabelTable((operation) => ({ operation })),
  entryFailure: new LabelTable((code) => ({ code })),
  replicaWait: new LabelTable((outcome) => ({ outcome })),
  reassert: new LabelTable((outcome) => ({ outcome })),
};
/** How a wait for replicas ended (durability/replica-acks.ts). */
export const REPLICA_WAIT_OUTCOMES = ['acknowledged', 'no-replica', 'timeout', 'failed'] as const;
/** How a write kept through a failover was settled (durability/kept-writes.ts). */
export const REASSERT_OUTCOMES = ['written', 'present', 'superseded'] as const;
for (const outcome of REPLICA_WAIT_OUTCOMES) LABELS.replicaWait.seed(outcome);
for (const outcome of REASSERT_OUTCOMES) LABELS.reassert.seed(outcome);
for (const grant of TOKEN_GRANTS)
  for (const outcome of TOKEN_OUTCOMES) LABELS.token.seed(grant, outcome);
for (const background of [false, true]) {
  for (const renewed of RENEWALS) LABELS.refresh.seed(renewed, background);
  for (const code of REFRESH_FAILURE_CODES) LABELS.refreshFailure.seed(code, background);
}
for (const outcome of LOCK_WAIT_OUTCOMES) LABELS.lockWait.seed(outcome);
for (const sameBrowser of [false, true]) LABELS.codeReplay.seed(sameBrowser);
for (const held of [false, true]) LABELS.exchangeHold.seed(held);
for (const reason of UNREADABLE_REASONS) LABELS.unreadable.seed(reason);
for (const operation of STORE_OPERATIONS) {
  for (const outcome of STORE_CALL_OUTCOMES) LABELS.storeCall.seed(operation, outcome);
  LABELS.storeError.seed(operation);
}
LABELS.storeError.seed(SESSION_STORE);
for (const code of ENTRY_FAILURE_CODES) LABELS.entryFailure.seed(code);

const NO_LABELS = attributes({});

/** A counter with its known series (those of `labels`: one with no label when none) started at zero. */
function counter(meter: Meter, name: string, description: string, labels?: LabelTable): Counter {
  const created = meter.createCounter(name, { description });
  for (const seed of labels?.known() ?? [NO_LABELS]) created.add(0, seed);
  return created;
}

function seconds(meter: Meter, name: string, description: string, buckets: readonly number[]) {
  return meter.createHistogram(name, {
    unit: 's',
    description,
    advice: { explicitBucketBoundaries: [...buckets] },
  });
}

/** Every instrument the package records to. */
export class PlatformMetrics {
  /** `epl.token_endpoint.calls` {grant, outcome}: one per attempt, retries included. */
  readonly tokenCalls: Counter;
  /** `epl.token_endpoint.duration_seconds` {grant, outcome}: buckets up to the client's timeout. */
  readonly tokenDuration: Histogram;
  /** `epl.refreshes` {renewed: same-token | new-token, background}. */
  readonly refreshes: Counter;
  /** `epl.refresh.failures` {code, background}. */
  readonly refreshFailures: Counter;
  /** `epl.lock.waits` {outcome: refreshed-elsewhere | took-over | gave-up | logged-out}. */
  readonly lockWaits: Counter;
  /** `epl.lock.wait_duration_seconds` {outcome}: buckets up to the longest wait allowed. */
  readonly lockWaitDuration: Histogram;
  /** `epl.code_replays` {same_browser}. */
  readonly codeReplays: Counter;
  /** `epl.entry.exchange_holds` {held}: the platform's throttle started (`true`) or a probe ended it. */
  readonly exchangeHolds: Counter;
  /** `epl.store.errors` {operation}: the token store's calls, and `session` for express-session's store. */
  readonly storeErrors: Counter;
  /** `epl.entry.failures` {code}: entries refused or failed, by the code answered. */
  readonly entryFailures: Counter;
  /** `epl.store.duration_seconds` {operation, outcome}: sub-millisecond buckets. */
  readonly storeDuration: Histogram;
  /** `epl.records.unreadable` {reason}. */
  readonly unreadableRecords: Counter;
  /** `epl.replica.waits` {outcome}: writes confirmed on a replica before the player was answered. */
  readonly replicaWaits: Counter;
  /** `epl.replica.wait_duration_seconds`: how long those waits took. */
  readonly replicaWaitDuration: Histogram;
  /** `epl.replica.reasserts` {outcome}: writes kept through a failover, settled on the new primary. */
  readonly reasserts: Counter;
  /** `epl.logins` and `epl.logouts`. */
  readonly logins: Counter;
  readonly logouts: Counter;

  /** `provider` defaults to the global one (a no-op until the app registers an SDK). */
  constructor(provider: MeterProvider | undefined, settings: MetricsSettings) {
    const meter = (provider ?? metrics).getMeter(PACKAGE_NAME, PACKAGE_VERSION);
    this.tokenCalls = counter(
      meter,
      'epl.token_endpoint.calls',
      'Token endpoint attempts by grant and outcome',
      LABELS.token,
    );
    this.tokenDuration = seconds(
      meter,
      'epl.token_endpoint.duration_seconds',
      'Token endpoint attempt latency',
      bucketsUpTo(0.005, settings.tokenTimeoutMs),
    );
    this.refreshes = counter(meter, 'epl.refreshes', 'Successful token refreshes', LABELS.refresh);
    this.refreshFailures = counter(
      meter,
      'epl.refresh.failures',
      'Failed token refreshes',
      LABELS.refreshFailure,
    );
    this.lockWaits = counter(
      meter,
      'epl.lock.waits',
      'Requests that waited for another holder of the refresh lock',
      LABELS.lockWait,
    );
    this.lockWaitDuration = seconds(
      meter,
      'epl.lock.wait_duration_seconds',
      'How long requests waited for the refresh lock',
      // Waiters poll every 25–75 ms, so nothing shorter is worth a bucket.
      bucketsUpTo(0.025, settings.maxLockWaitMs),
    );
    this.codeReplays = counter(
      meter,
      'epl.code_replays',
      'Entry codes presented again',
      LABELS.codeReplay,
    );
    this.exchangeHolds = counter(
      meter,
      'epl.entry.exchange_holds',
      'Holds of the code exchange: started by a throttled answer (held=true), ended by a probe (held=false)',
      LABELS.exchangeHold,
    );
    this.storeErrors = counter(
      meter,
      'epl.store.errors',
      'Token store failures',
      LABELS.storeError,
    );
    this.entryFailures = counter(
      meter,
      'epl.entry.failures',
      'Entries refused or failed, by code',
      LABELS.entryFailure,
    );
    this.storeDuration = seconds(
      meter,
      'epl.store.duration_seconds',
      'Token store call latency',
      STORE_BUCKETS,
    );
    this.unreadableRecords = counter(
      meter,
      'epl.records.unreadable',
      'Stored records that did not decrypt or parse (read as logged out)',
      LABELS.unreadable,
    );
    this.replicaWaits = counter(
      meter,
      'epl.replica.waits',
      'Waits for a replica to acknowledge the writes a login depends on, by outcome',
      LABELS.replicaWait,
    );
    this.replicaWaitDuration = seconds(
      meter,
      'epl.replica.wait_duration_seconds',
      'How long waits for a replica took',
      bucketsUpTo(0.001, 60_000),
    );
    this.reasserts = counter(
      meter,
      'epl.replica.reasserts',
      'Writes kept through a failover and settled on the new primary, by outcome',
      LABELS.reassert,
    );
    this.logins = counter(meter, 'epl.logins', 'Players who entered');
    this.logouts = counter(meter, 'epl.logouts', 'Players who logged out');
  }
}
