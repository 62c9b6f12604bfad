// The package's metrics, through the OpenTelemetry metrics API (a no-op until the app registers an
// SDK), created once from the tables below; names, units, labels and seeding as docs/metrics.md says.
import {
  metrics,
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
} from '@opentelemetry/api';
import { codesOf } from '../errors';
import { TOKEN_GRANTS } from '../client/token-response';
import {
  LOCK_WAIT_OUTCOMES,
  RENEWALS,
  STORE_CALL_OUTCOMES,
  STORE_OPERATIONS,
  UNREADABLE_REASONS,
} from './events';
import { PACKAGE_NAME, PACKAGE_VERSION } from './package-identity';

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

type LabelValue = string | boolean;

/**
 * A counter's label sets (one or two labels), built once as shared frozen objects for every pair
 * of `first` × `second`: recording looks one up without allocating, and a series seeded at zero is
 * the very series later recorded to. A value not known in advance gets a set of its own.
 */
class LabelTable {
  readonly #known = new Map<LabelValue, Map<LabelValue | undefined, Attributes>>();
  constructor(
    private readonly build: (a: LabelValue, b?: LabelValue) => Attributes,
    first: readonly LabelValue[],
    second: readonly LabelValue[] | [undefined] = [undefined],
  ) {
    for (const a of first) {
      this.#known.set(a, new Map(second.map((b) => [b, Object.freeze(build(a, b))])));
    }
  }
  get(a: LabelValue, b?: LabelValue): Attributes {
    return this.#known.get(a)?.get(b) ?? this.build(a, b);
  }
  /** The label sets seeded. */
  known(): Attributes[] {
    return [...this.#known.values()].flatMap((sets) => [...sets.values()]);
  }
}

/** How a wait for replicas ended (durability/replica-acks.ts). */
const REPLICA_WAIT_OUTCOMES = ['acknowledged', 'no-replica', 'timeout', 'failed'] as const;
/** How a write kept through a failover was settled (durability/kept-writes.ts). */
const REASSERT_OUTCOMES = ['written', 'present', 'superseded'] as const;
const BOOLEANS = [false, true];

/** Labels of each counter, shared by the seeding at zero and every recording. */
export const LABELS = {
  // `outcome`: `ok` and every error code the token client ends an attempt with.
  token: new LabelTable((grant, outcome) => ({ grant, outcome }), TOKEN_GRANTS, [
    'ok',
    ...codesOf('token'),
  ]),
  refresh: new LabelTable((renewed, background) => ({ renewed, background }), RENEWALS, BOOLEANS),
  refreshFailure: new LabelTable(
    (code, background) => ({ code, background }),
    codesOf('refresh'),
    BOOLEANS,
  ),
  lockWait: new LabelTable((outcome) => ({ outcome }), LOCK_WAIT_OUTCOMES),
  codeReplay: new LabelTable((sameBrowser) => ({ same_browser: sameBrowser }), BOOLEANS),
  exchangeHold: new LabelTable((held) => ({ held }), BOOLEANS),
  unreadable: new LabelTable((reason) => ({ reason }), UNREADABLE_REASONS),
  storeCall: new LabelTable(
    (operation, outcome) => ({ operation, outcome }),
    STORE_OPERATIONS,
    STORE_CALL_OUTCOMES,
  ),
  // `session`: express-session's store failing in front of the package.
  storeError: new LabelTable((operation) => ({ operation }), [...STORE_OPERATIONS, 'session']),
  entryFailure: new LabelTable((code) => ({ code }), codesOf('entry')),
  replicaWait: new LabelTable((outcome) => ({ outcome }), REPLICA_WAIT_OUTCOMES),
  reassert: new LabelTable((outcome) => ({ outcome }), REASSERT_OUTCOMES),
};

/** Every counter: its name, description and labels (none: one series without labels). */
const COUNTERS = {
  tokenCalls: [
    'epl.token_endpoint.calls',
    'Token endpoint attempts by grant and outcome',
    LABELS.token,
  ],
  refreshes: ['epl.refreshes', 'Successful token refreshes', LABELS.refresh],
  refreshFailures: ['epl.refresh.failures', 'Failed token refreshes', LABELS.refreshFailure],
  lockWaits: [
    'epl.lock.waits',
    'Requests that waited for another holder of the refresh lock',
    LABELS.lockWait,
  ],
  codeReplays: ['epl.code_replays', 'Entry codes presented again', LABELS.codeReplay],
  exchangeHolds: [
    'epl.entry.exchange_holds',
    'Holds of the code exchange: started by a throttled answer (held=true), ended by a probe (held=false)',
    LABELS.exchangeHold,
  ],
  storeErrors: ['epl.store.errors', 'Token store failures', LABELS.storeError],
  entryFailures: ['epl.entry.failures', 'Entries refused or failed, by code', LABELS.entryFailure],
  unreadableRecords: [
    'epl.records.unreadable',
    'Stored records that did not decrypt or parse (read as logged out)',
    LABELS.unreadable,
  ],
  replicaWaits: [
    'epl.replica.waits',
    'Waits for a replica to acknowledge the writes a login depends on, by outcome',
    LABELS.replicaWait,
  ],
  reasserts: [
    'epl.replica.reasserts',
    'Writes kept through a failover and settled on the new primary, by outcome',
    LABELS.reassert,
  ],
  logins: ['epl.logins', 'Players who entered'],
  logouts: ['epl.logouts', 'Players who logged out'],
} satisfies Record<string, [string, string, LabelTable?]>;

/** Every histogram: its name, description and bucket boundaries. */
const histograms = (settings: MetricsSettings) =>
  ({
    tokenDuration: [
      'epl.token_endpoint.duration_seconds',
      'Token endpoint attempt latency',
      bucketsUpTo(0.005, settings.tokenTimeoutMs),
    ],
    lockWaitDuration: [
      'epl.lock.wait_duration_seconds',
      'How long requests waited for the refresh lock',
      // Waiters poll every 25–75 ms, so nothing shorter is worth a bucket.
      bucketsUpTo(0.025, settings.maxLockWaitMs),
    ],
    storeDuration: ['epl.store.duration_seconds', 'Token store call latency', STORE_BUCKETS],
    replicaWaitDuration: [
      'epl.replica.wait_duration_seconds',
      'How long waits for a replica took',
      bucketsUpTo(0.001, 60_000),
    ],
  }) satisfies Record<string, [string, string, readonly number[]]>;

/** Every instrument the package records to, by the names of the tables above. */
export type PlatformMetrics = Record<keyof typeof COUNTERS, Counter> &
  Record<keyof ReturnType<typeof histograms>, Histogram>;

/** The instruments; `provider` defaults to the global one (a no-op until the app registers an SDK). */
export function platformMetrics(
  provider: MeterProvider | undefined,
  settings: MetricsSettings,
): PlatformMetrics {
  const meter = (provider ?? metrics).getMeter(PACKAGE_NAME, PACKAGE_VERSION);
  const made: Record<string, Counter | Histogram> = {};
  for (const [key, [name, description, labels]] of Object.entries(COUNTERS)) {
    const counter = meter.createCounter(name, { description });
    // Started at zero, so `rate(…)` and alerts have a series before the first event.
    for (const seed of labels?.known() ?? [{}]) counter.add(0, seed);
    made[key] = counter;
  }
  for (const [key, [name, description, buckets]] of Object.entries(histograms(settings))) {
    made[key] = meter.createHistogram(name, {
      unit: 's',
      description,
      advice: { explicitBucketBoundaries: [...buckets] },
    });
  }
  return made as PlatformMetrics;
}
