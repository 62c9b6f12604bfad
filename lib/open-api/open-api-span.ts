// A CLIENT span per open-API call (HTTP client semantic conventions), a child of the caller's
// active span.
import { SpanKind } from '@opentelemetry/api';
import { failed, httpClientAttributes, tracer } from '../observability/tracing';
import type { OpenApiOutcome } from './open-api-metrics';

/** Starts the span of a call to `url` (a no-op until the app registers an SDK); `end` records how it ended. */
export function openApiSpan(
  method: string,
  url: URL,
): { end(outcome: OpenApiOutcome, status?: number): void } {
  const span = tracer.startSpan(method, { kind: SpanKind.CLIENT });
  if (span.isRecording()) span.setAttributes(httpClientAttributes(method, url));
  return {
    end(outcome, status) {
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (status === undefined || status >= 400) {
        const noAnswer =
          outcome === 'timeout' ? 'ERR_PLATFORM_API_TIMEOUT' : 'ERR_PLATFORM_API_UNREACHABLE';
        failed(span, status === undefined ? noAnswer : String(status));
      }
      span.end();
    },
  };
}
