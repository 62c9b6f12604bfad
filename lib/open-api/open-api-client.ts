// The one way the package calls the platform's open API with a player's token, for routes
// (`req.platformFetch`), sockets and jobs alike: the URL checked against the configured bases, the
// app's fetch (`tokenClient.fetch`), a deadline over headers and body, typed errors instead of
// undici's raw TypeError, a metric and a span.
import { SpanKind } from '@opentelemetry/api';
import { hasCode, openApiFailed } from '../errors';
import { failed, httpClientAttributes, tracer } from '../observability/tracing';
import type { OpenApiMetrics, OpenApiOutcome } from './open-api-metrics';
import type { OpenApiBase, OpenApiSettings } from './open-api-options';

/** `RequestInit` plus the open-API base a path is resolved against. */
export interface OpenApiRequestInit extends RequestInit {
  /**
   * Which of the configured bases a path (`'/userinfo'`) goes to: a key of `api.urls`, or
   * `'default'` (`api.url`). Absolute URLs need none: they must lie under one of the bases.
   * Defaults to `'default'`.
   */
  api?: string;
}

/** True when `path` is `base` or below it, by whole segments: `/v1` admits `/v1/x`, not `/v1evil`. */
const isUnderPath = (path: string, base: string): boolean =>
  base.endsWith('/') ? path.startsWith(base) : path === base || path.startsWith(`${base}/`);

const isUnder = (url: URL, base: OpenApiBase): boolean =>
  url.origin === base.url.origin && isUnderPath(url.pathname, base.url.pathname);

const outcomeOf = (status: number): OpenApiOutcome =>
  status < 300 ? '2xx' : status < 400 ? '3xx' : status < 500 ? '4xx' : '5xx';

/** Calls the open API; one per PlatformLogin. */
export class OpenApiClient {
  readonly #settings: OpenApiSettings;
  readonly #byName: Map<string, OpenApiBase>;
  readonly #metrics: OpenApiMetrics;

  constructor(settings: OpenApiSettings, metrics: OpenApiMetrics) {
    this.#settings = settings;
    this.#byName = new Map(settings.bases.map((base) => [base.name, base]));
    this.#metrics = metrics;
  }

  /**
   * The URL of a call, checked: a path goes under the base `api` names; an absolute URL must lie
   * under one of the bases. The token goes to the open API only, never to whatever URL a handler
   * happens to pass. Throws a TypeError naming the fix.
   */
  resolve(pathOrUrl: string | URL, api = 'default'): URL {
    const base = this.#byName.get(api);
    if (base === undefined) {
      throw new TypeError(
        `platformFetch(): no open-API base is named "${api}"; name it in the \`api.urls\` option (known: ${[...this.#byName.keys()].join(', ')}).`,
      );
    }
    const isPath =
      typeof pathOrUrl === 'string' && pathOrUrl.startsWith('/') && !pathOrUrl.startsWith('//');
    // Anything else that is not a URL ("userinfo", "@host/x") is refused as one outside the API.
    const href = isPath ? base.href + pathOrUrl : String(pathOrUrl);
    // Not URL.parse(): it came in Node 22.1, and the package runs on 22.0.
    const url = URL.canParse(href) ? new URL(href) : null;
    if (
      url === null ||
      (isPath ? !isUnder(url, base) : !this.#settings.bases.some((b) => isUnder(url, b)))
    ) {
      throw new TypeError(
        'platformFetch() only calls the open API under `api.url` (or `api.urls`); pass a path such as "/userinfo".',
      );
    }
    return url;
  }

  /**
   * Sends one call with `accessToken`. Resolves the open API's answer whatever its status (the
   * caller judges a 4xx/5xx); rejects with PlatformError `ERR_PLATFORM_API_TIMEOUT` when headers and body take longer
   * than the deadline, `ERR_PLATFORM_API_UNREACHABLE` when the connection fails, and the caller's own
   * abort reason when its `signal` aborts. Reading the returned body fails the same typed way.
   */
  async send(url: URL, init: OpenApiRequestInit, accessToken: string): Promise<Response> {
    const { tokenPlacement, tokenQueryParameter, timeoutMs } = this.#settings;
    const { api, signal: callerSignal, ...rest } = init;
    // Over the headers and the body alike; its timer holds nothing open.
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = callerSignal ? AbortSignal.any([callerSignal, deadline]) : deadline;
    const method = (rest.method ?? 'GET').toUpperCase();
    // A CLIENT span (HTTP client conventions), a child of the caller's; a no-op without an SDK.
    const span = tracer.startSpan(method, { kind: SpanKind.CLIENT });
    if (span.isRecording()) span.setAttributes(httpClientAttributes(method, url));
    const startedAt = performance.now();
    const apiName = api ?? 'default';

    const failure = (error: unknown): unknown => {
      if (callerSignal?.aborted === true) return callerSignal.reason as unknown;
      const where = `${method} ${url.origin}${url.pathname}`;
      return openApiFailed(where, deadline.aborted ? timeoutMs : undefined, error);
    };
    const finish = (outcome: OpenApiOutcome, status?: number): void => {
      this.#metrics.record(apiName, outcome, (performance.now() - startedAt) / 1000);
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (status === undefined || status >= 400) {
        const noAnswer =
          outcome === 'timeout' ? 'ERR_PLATFORM_API_TIMEOUT' : 'ERR_PLATFORM_API_UNREACHABLE';
        failed(span, status === undefined ? noAnswer : String(status));
      }
      span.end();
    };

    let answer: Response;
    try {
      // Not following redirects keeps the token from travelling to another host.
      const request: RequestInit = { ...rest, signal, redirect: 'manual' };
      let target = url;
      if (tokenPlacement === 'header') {
        request.headers = new Headers(rest.headers);
        request.headers.set('Authorization', `Bearer ${accessToken}`);
      } else {
        target = new URL(url);
        target.searchParams.set(tokenQueryParameter, accessToken);
      }
      answer = await this.#settings.fetch(target, request);
    } catch (error) {
      const typed = failure(error);
      finish(hasCode(typed, 'ERR_PLATFORM_API_TIMEOUT') ? 'timeout' : 'unreachable');
      throw typed;
    }
    finish(outcomeOf(answer.status), answer.status);
    if (answer.body === null) return answer;
    // The body's failures reach the reader typed too.
    const guarded = new Response(guardedBody(answer.body, failure), {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers,
    });
    Object.defineProperty(guarded, 'url', { value: answer.url });
    return guarded;
  }
}

/** `body`, with read failures turned by `failure`. */
function guardedBody(
  body: ReadableStream<Uint8Array>,
  failure: (error: unknown) => unknown,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      } catch (error) {
        controller.error(failure(error));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
