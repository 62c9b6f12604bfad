// A real OpenTelemetry SDK meter provider whose metrics a test reads as Prometheus text, the way an
// operator would scrape them.
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';

export interface TestMeter {
  provider: MeterProvider;
  /** The metrics now, in Prometheus text format. */
  scrape(): Promise<string>;
  shutdown(): Promise<void>;
}

export function createTestMeter(): TestMeter {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const serializer = new PrometheusSerializer();
  return {
    provider,
    scrape: async () => serializer.serialize((await exporter.collect()).resourceMetrics),
    shutdown: () => provider.shutdown(),
  };
}

/** The value of one sample line, e.g. `epl_logins_total`, with labels matching `labels`. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const lines = text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
  const match = lines.find((line) =>
    Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`)),
  );
  if (match === undefined) return 0;
  return Number(match.slice(match.lastIndexOf(' ') + 1));
}

/** The sample lines of `name` whose labels include `labels`. */
export function series(text: string, name: string, labels: Record<string, string> = {}): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) =>
      Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`)),
    );
}

/** The finite `le` bounds of a histogram's buckets (`<name>_bucket`) for one label set, in order. */
export function bucketBounds(text: string, name: string, labels: Record<string, string>): number[] {
  return series(text, `${name}_bucket`, labels)
    .map((line) => /le="([^"]+)"/.exec(line)![1]!)
    .filter((le) => le !== '+Inf')
    .map(Number);
}
