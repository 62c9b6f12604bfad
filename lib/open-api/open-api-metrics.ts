// The open API's instruments (naming as in observability/metrics.ts): how many calls, by the
// configured base and outcome, and how long each took to its headers.
import { metrics, type Attributes, type MeterProvider } from '@opentelemetry/api';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../observability/package-identity';

const OUTCOMES = ['2xx', '3xx', '4xx', '5xx', 'timeout', 'unreachable'] as const;

/** How a call ended: the status class of the open API's answer, or no answer. */
export type OpenApiOutcome = (typeof OUTCOMES)[number];

/** A round trip to an API on the internet: 5 ms to the deadline. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Records `epl.open_api.calls` {api, outcome} and `epl.open_api.duration_seconds` {api, outcome}. */
export class OpenApiMetrics {
  readonly #labels = new Map<string, Attributes>();
  readonly #calls;
  readonly #duration;

  /** `apiNames`: the configured bases; each gets its series started at zero. */
  constructor(provider: MeterProvider | undefined, apiNames: readonly string[]) {
    const meter = (provider ?? metrics).getMeter(PACKAGE_NAME, PACKAGE_VERSION);
    this.#calls = meter.createCounter('epl.open_api.calls', {
      description: 'Open API calls by base and outcome',
    });
    this.#duration = meter.createHistogram('epl.open_api.duration_seconds', {
      unit: 's',
      description: 'Open API call latency to the answer headers',
      advice: { explicitBucketBoundaries: BUCKETS },
    });
    // Shared frozen label sets, one per base and outcome: recording allocates nothing.
    for (const api of apiNames) {
      for (const outcome of OUTCOMES) {
        const labels = Object.freeze({ api, outcome });
        this.#labels.set(`${api}\u0000${outcome}`, labels);
        this.#calls.add(0, labels);
      }
    }
  }

  /** Counts one call to a configured base (the client refuses any other) and its duration in seconds. */
  record(api: string, outcome: OpenApiOutcome, seconds: number): void {
    const labels = this.#labels.get(`${api}\u0000${outcome}`) ?? { api, outcome };
    this.#calls.add(1, labels);
    this.#duration.record(seconds, labels);
  }
}
