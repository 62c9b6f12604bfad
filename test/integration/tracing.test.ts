// Traces through the OpenTelemetry API, recorded by a real SDK (in-memory span exporter): a CLIENT
// span `POST` per token-endpoint attempt with the HTTP client semantic conventions, an `epl.refresh`
// span per refresh holding its attempts, and no secret in any of them.
import { context, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import request from 'supertest';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { MemoryTokenStore, type PlatformLoginOptions } from 'express-platform-login';
import { createTestApp, TEST_REDIRECT_URI } from '../helpers/test-app';
import { enter, expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { sessionIdFrom } from '../helpers/session-cookie';
import { findLeaks } from '../helpers/leak-scan';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager().enable();

let sim: PlatformSimulator;
beforeAll(async () => {
  // Registered as an app would, after the package was loaded: its tracer must follow.
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
  await provider.shutdown();
  trace.disable();
  context.disable();
});
beforeEach(() => {
  sim.clearFaults();
  exporter.reset();
});

const spans = (name: string): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((span) => span.name === name);

/** Everything a span exporter would send: names, attributes, status, events, resource. */
const exported = (): string =>
  JSON.stringify(
    exporter.getFinishedSpans().map((span) => ({
      name: span.name,
      attributes: span.attributes,
      status: span.status,
      events: span.events,
      links: span.links,
    })),
  );

test('an entry records one CLIENT span `POST` with the HTTP client attributes', async () => {
  const { app } = createTestApp({ sim });
  await enter(app, sim);
  const [span, ...others] = spans('POST');
  expect(others).toHaveLength(0);
  const endpoint = new URL(`${sim.url}/token`);
  expect(span!.kind).toBe(SpanKind.CLIENT);
  expect(span!.attributes).toEqual({
    'http.request.method': 'POST',
    'server.address': endpoint.hostname,
    'server.port': Number(endpoint.port),
    'url.full': endpoint.href,
    'http.response.status_code': 200,
    'epl.token_endpoint.grant': 'authorization_code',
    'epl.token_endpoint.outcome': 'ok',
  });
  expect(span!.status.code).toBe(SpanStatusCode.UNSET);
  expect(spans('epl.refresh')).toHaveLength(0);
});

/** A player entered on a test app with `tokenClient`, their token due to expire in `ms`. */
async function playerDueIn(ms: number, tokenClient: PlatformLoginOptions['tokenClient']) {
  const store = new MemoryTokenStore();
  const { app } = createTestApp({ sim, login: { store, tokenClient } });
  const { agent, sessionId } = await enter(app, sim);
  await rewriteRecord(store, sessionId, expiringIn(ms));
  return agent;
}

test('a refresh records `epl.refresh` holding its attempts; a retried 503 is one span per attempt with error.type', async () => {
  const agent = await playerDueIn(10_000, { refreshRetries: 1, retryBaseDelayMs: 0 });
  sim.injectFault({ kind: 'status', status: 503 }, { grant: 'refresh_token', times: 1 });
  exporter.reset();
  await agent.get('/api/me').expect(200);

  const [refresh, ...moreRefreshes] = spans('epl.refresh');
  expect(moreRefreshes).toHaveLength(0);
  expect(refresh!.kind).toBe(SpanKind.INTERNAL);
  expect(refresh!.attributes).toEqual({ 'epl.refresh.background': false });
  expect(refresh!.status.code).toBe(SpanStatusCode.UNSET);

  const attempts = spans('POST');
  expect(attempts.map((span) => span.attributes['http.response.status_code'])).toEqual([503, 200]);
  for (const attempt of attempts) {
    expect(attempt.parentSpanContext?.spanId).toBe(refresh!.spanContext().spanId);
    expect(attempt.attributes['epl.token_endpoint.grant']).toBe('refresh_token');
  }
  expect(attempts[0]!.attributes['error.type']).toBe('503');
  expect(attempts[0]!.status.code).toBe(SpanStatusCode.ERROR);
  expect(attempts[1]!.attributes).not.toHaveProperty('error.type');
  expect(attempts.map((span) => span.attributes['http.request.resend_count'])).toEqual([
    undefined,
    1,
  ]);
});

test('a failed refresh: `epl.refresh` ends in error with the package code; a timeout names its code', async () => {
  const agent = await playerDueIn(-1000, { refreshRetries: 0, timeoutMs: 2000 });
  sim.injectFault({ kind: 'latency', ms: 6000 }, { grant: 'refresh_token', times: 1 });
  exporter.reset();
  await agent.get('/api/me').expect(503);

  const [refresh] = spans('epl.refresh');
  expect(refresh!.status.code).toBe(SpanStatusCode.ERROR);
  expect(refresh!.attributes['error.type']).toBe('ERR_PLATFORM_UNAVAILABLE');
  const [attempt] = spans('POST');
  expect(attempt!.attributes['error.type']).toBe('ERR_PLATFORM_TIMEOUT');
  expect(attempt!.attributes).not.toHaveProperty('http.response.status_code');
});

test('no code, token, secret or session id in any span, even with the refresh parameters in the query', async () => {
  const store = new MemoryTokenStore();
  const { app } = createTestApp({
    sim,
    login: { store, tokenClient: { refreshParameterPlacement: 'query' } },
  });
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
  const agent = request.agent(app);
  const entry = await agent.get(`/platform/callback?code=${encodeURIComponent(code)}`).expect(303);
  const sessionId = sessionIdFrom(entry);
  const first = await storedRecord(store, sessionId);
  await rewriteRecord(store, sessionId, expiringIn(-1000));
  await agent.get('/api/me').expect(200);
  const second = await storedRecord(store, sessionId);

  expect(spans('POST')).toHaveLength(2);
  for (const span of spans('POST')) expect(span.attributes['url.full']).toBe(`${sim.url}/token`);
  const leaks = findLeaks(
    [{ source: 'spans', text: exported() }],
    [
      { label: 'code', value: code },
      { label: 'access token', value: first!.accessToken },
      { label: 'refresh token', value: first!.refreshToken },
      { label: 'new access token', value: second!.accessToken },
      { label: 'session id', value: sessionId },
      { label: 'client secret', value: 'demo-secret' },
    ],
  );
  expect(leaks).toEqual([]);
});
