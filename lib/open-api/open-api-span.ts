// A CLIENT span per open-API call (HTTP client semantic conventions), a child of the caller's
// active span. `url.full` is the origin and path only: the token may sit in the query.
import { SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../observability/package-identity';
import type { OpenApiOutcome } from './open-api-metrics';

const tracer: Tracer = trace.getTracer(PACKAGE_NAME, PACKAGE_VERSION);

/** Starts the span of a call to `url` (a no-op until the app registers an SDK); `end` records how it ended. */
export function openApiSpan(
  method: string,
  url: URL,
): { end(outcome: OpenApiOutcome, status?: number): void } {
  const span = tracer.startSpan(method, { kind: SpanKind.CLIENT });
  if (span.isRecording()) {
    span.setAttributes({
      'http.request.method': method,
      'server.address': url.hostname,
      'server.port': url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
      'url.full': `${url.origin}${url.pathname}`,
    });
  }
  return {
    end(outcome, status) {
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (status === undefined || status >= 400) {
        const noAnswer =
          outcome === 'timeout' ? 'ERR_PLATFORM_API_TIMEOUT' : 'ERR_PLATFORM_API_UNREACHABLE';
        span.setAttribute('error.type', status === undefined ? noAnswer : String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}
