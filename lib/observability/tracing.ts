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

/**
 * A proxy of the global tracer provider: it follows a provider the app registers later, so it can
 * be taken once at load.
 */
const tracer: Tracer = trace.getTracer(PACKAGE_NAME, PACKAGE_VERSION);

/**
 * The attributes of the token endpoint (HTTP client semantic conventions): method, host, port and
 * `url.full` — the configured endpoint, which has no query or credentials (the client refuses
 * them in `authUrl`); the query a refresh may carry (`refreshParameterPlacement: 'query'`) is never
 * in it.
 */
function tokenEndpointAttributes(tokenEndpoint: string): Attributes {
  const url = new URL(tokenEndpoint);
  const defaultPort = url.protocol === 'https:' ? 443 : 80;
  return Object.freeze({
    'http.request.method': 'POST',
    'server.address': url.hostname,
    'server.port': url.port === '' ? defaultPort : Number(url.port),
    'url.full': `${url.origin}${url.pathname}`,
  });
}

/**
 * An `onAttempt` observer that records each token-endpoint attempt as a CLIENT span named `POST`,
 * after the fact with its real start and end, as a child of the caller's active span (the
 * `epl.refresh` span, or the app's request span on an entry).
 */
export function tokenAttemptSpans(): (attempt: TokenAttempt) => void {
  let endpoint: string | undefined;
  let target: Attributes = {};
  return (attempt) => {
    const span = tracer.startSpan('POST', {
      kind: SpanKind.CLIENT,
      startTime: attempt.startedAt,
    });
    if (span.isRecording()) {
      if (attempt.tokenEndpoint !== endpoint) {
        endpoint = attempt.tokenEndpoint;
        target = tokenEndpointAttributes(endpoint);
      }
      span.setAttributes(target);
      span.setAttribute('epl.token_endpoint.grant', attempt.grant);
      span.setAttribute('epl.token_endpoint.outcome', attempt.outcome);
      // Each retry is a span of its own, numbered as the conventions say.
      if (attempt.resendCount > 0) {
        span.setAttribute('http.request.resend_count', attempt.resendCount);
      }
      if (attempt.httpStatus !== undefined) {
        span.setAttribute('http.response.status_code', attempt.httpStatus);
      }
      // HTTP semantic conventions: the status code for a 4xx/5xx answer, else a low-cardinality
      // identifier of the failure (the package's error code: timeout, network, invalid answer).
      const errorType =
        attempt.httpStatus !== undefined && attempt.httpStatus >= 400
          ? String(attempt.httpStatus)
          : attempt.outcome === 'ok'
            ? undefined
            : attempt.outcome;
      if (errorType !== undefined) {
        span.setAttribute('error.type', errorType);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    span.end(attempt.startedAt + attempt.durationMs);
  };
}

/** The error's stable `code` (`ERR_PLATFORM_…`) — never its message, which a span must not carry. */
const errorCode = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'ERR_UNKNOWN';
};

function endWith(span: Span, error: unknown): void {
  span.setAttribute('error.type', errorCode(error));
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
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
      run().then(
        (result) => {
          span.end();
          return result;
        },
        (error: unknown) => {
          endWith(span, error);
          throw error;
        },
      ),
  );
}
