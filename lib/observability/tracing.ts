// The package's spans, through the OpenTelemetry trace API (a no-op until the app registers an
// SDK): one HTTP client span per token-endpoint attempt, one `epl.refresh` span per refresh. No
// attribute ever holds a token, a code, a secret, a session id or a URL's query.
import {
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { TokenAttempt } from '../client/token-client-options';
import { PACKAGE_NAME, PACKAGE_VERSION } from './package-identity';

/** A proxy of the global provider's tracer: it follows a provider registered later, so taken at load. */
export const tracer: Tracer = trace.getTracer(PACKAGE_NAME, PACKAGE_VERSION);

/**
 * An HTTP client span's attributes (semantic conventions): `url.full` is the origin and path only,
 * since a token may sit in the query.
 */
export function httpClientAttributes(method: string, url: URL): Attributes {
  return {
    'http.request.method': method,
    'server.address': url.hostname,
    'server.port': url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
    'url.full': `${url.origin}${url.pathname}`,
  };
}

/** Marks `span` failed with `errorType`, a low-cardinality identifier (never a message). */
export function failed(span: Span, errorType: string): void {
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Records a token-endpoint attempt as a CLIENT span named `POST`, after the fact with its real
 * start and end, as a child of the caller's active span (the `epl.refresh` span, or the app's
 * request span on an entry).
 */
export function recordTokenAttemptSpan(attempt: TokenAttempt): void {
  const span = tracer.startSpan('POST', { kind: SpanKind.CLIENT, startTime: attempt.startedAt });
  if (span.isRecording()) {
    span.setAttributes({
      ...httpClientAttributes('POST', new URL(attempt.tokenEndpoint)),
      'epl.token_endpoint.grant': attempt.grant,
      'epl.token_endpoint.outcome': attempt.outcome,
      // Each retry is a span of its own, numbered as the conventions say.
      ...(attempt.resendCount > 0 && { 'http.request.resend_count': attempt.resendCount }),
      ...(attempt.httpStatus !== undefined && {
        'http.response.status_code': attempt.httpStatus,
      }),
    });
    // HTTP semantic conventions: the status code for a 4xx/5xx answer, else the package's error
    // code (timeout, network, invalid answer).
    if (attempt.httpStatus !== undefined && attempt.httpStatus >= 400) {
      failed(span, String(attempt.httpStatus));
    } else if (attempt.outcome !== 'ok') failed(span, attempt.outcome);
  }
  span.end(attempt.startedAt + attempt.durationMs);
}

/**
 * Runs one refresh inside an active INTERNAL span `epl.refresh` (lock waits, store calls and the
 * token-endpoint attempts happen inside it). A failure sets `error.type` to the package's code.
 */
export function traceRefresh<T>(background: boolean, run: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(
    'epl.refresh',
    { kind: SpanKind.INTERNAL, attributes: { 'epl.refresh.background': background } },
    (span) =>
      run()
        .catch((error: unknown) => {
          // The error's stable `code` (`ERR_PLATFORM_…`), never its message.
          const code = (error as { code?: unknown } | null)?.code;
          failed(span, typeof code === 'string' ? code : 'ERR_UNKNOWN');
          throw error;
        })
        .finally(() => span.end()),
  );
}
