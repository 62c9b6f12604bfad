// The example's metrics: an OpenTelemetry SDK with a Prometheus exporter that does not open a port
// of its own; `GET /metrics` on the app serves its text format.
import type { RequestHandler } from 'express';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';

/** The service name Prometheus sees (`target_info{service_name=…}`); without it: `unknown_service:node`. */
const EXAMPLE_SERVICE_NAME = 'example-game-backend';

export interface ExampleMetrics {
  meterProvider: MeterProvider;
  /** `GET /metrics` in Prometheus text format. */
  handler: RequestHandler;
}

export function createExampleMetrics(): ExampleMetrics {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({
    // `service.name` is the semantic conventions' attribute (ATTR_SERVICE_NAME).
    resource: resourceFromAttributes({ 'service.name': EXAMPLE_SERVICE_NAME }),
    readers: [exporter],
  });
  return { meterProvider, handler: (req, res) => exporter.getMetricsRequestHandler(req, res) };
}
