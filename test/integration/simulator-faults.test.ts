// Every fault knob of the simulator's token endpoint does what it says, over real HTTP: what the
// client receives, whether the request was processed (the code used up), and how faults are picked.
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import {
  REDIRECT_URI,
  exchange,
  exchangeNewCode,
  exchangeParams,
  login,
  postTokenForm,
  refresh,
} from '../helpers/simulator-requests';

let simulator: PlatformSimulator;

beforeEach(async () => {
  simulator = await startSimulator();
});

afterEach(async () => {
  await simulator.close();
});

/** POST /token exchanging a fresh code, answered raw so a test can look at anything. */
function rawExchange(
  code = simulator.issueCode({ redirectUri: REDIRECT_URI }),
  init: RequestInit = {},
): Promise<Response> {
  return postTokenForm(simulator, exchangeParams(code), { redirect: 'manual', ...init });
}

test('latency: the normal answer arrives after the delay', async () => {
  simulator.injectFault({ kind: 'latency', ms: 300 });
  const started = performance.now();
  const response = await rawExchange();
  expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  expect(response.status).toBe(200);
  expect(((await response.json()) as { open_id: string }).open_id).toBe('player-ada');
});

test('status: that status, Retry-After and a short text body; the code is not used up', async () => {
  simulator.injectFault({ kind: 'status', status: 503, retryAfterSeconds: 7 });
  const code = simulator.issueCode({ redirectUri: REDIRECT_URI });
  const response = await rawExchange(code);
  expect(response.status).toBe(503);
  expect(response.headers.get('retry-after')).toBe('7');
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  expect(await response.text()).toBe('503 Service Unavailable');

  simulator.clearFaults();
  expect((await exchange(simulator, code)).status).toBe(200);
});

test('status 500 without Retry-After', async () => {
  simulator.injectFault({ kind: 'status', status: 500 });
  const response = await rawExchange();
  expect(response.status).toBe(500);
  expect(response.headers.get('retry-after')).toBeNull();
  await response.text();
});

test('html: 200 with an HTML page', async () => {
  simulator.injectFault({ kind: 'html' });
  const response = await rawExchange();
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  expect(await response.text()).toMatch(/^<!doctype html>/);
});

test('malformed-json: 200 application/json that does not parse', async () => {
  simulator.injectFault({ kind: 'malformed-json' });
  const response = await rawExchange();
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const text = await response.text();
  expect(() => JSON.parse(text)).toThrow(SyntaxError);
});

test('empty: 200 with an empty body', async () => {
  simulator.injectFault({ kind: 'empty' });
  const response = await rawExchange();
  expect(response.status).toBe(200);
  expect(await response.text()).toBe('');
});

test('error-body-200: HTTP 200 carrying an OAuth error; the code is not used up', async () => {
  simulator.injectFault(
    { kind: 'error-body-200', error: 'invalid_grant', errorDescription: 'nope' },
    { times: 1 },
  );
  const code = simulator.issueCode({ redirectUri: REDIRECT_URI });
  const response = await rawExchange(code);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ error: 'invalid_grant', error_description: 'nope' });
  expect((await exchange(simulator, code)).status).toBe(200);
});

test('oversized: a valid token response padded to the size asked, sent without Content-Length', async () => {
  simulator.injectFault({ kind: 'oversized', bytes: 200_000 });
  const response = await rawExchange();
  expect(response.status).toBe(200);
  expect(response.headers.get('content-length')).toBeNull();
  // A token answer still, faulty or not: never cached (RFC 6749 5.1).
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('pragma')).toBe('no-cache');
  const text = await response.text();
  expect(Buffer.byteLength(text)).toBe(200_000);
  const body = JSON.parse(text) as Record<string, string>;
  expect(body.open_id).toBe('player-ada');
  expect(body.padding?.length).toBeGreaterThan(199_000);
});

test('oversized: a client that stops reading does not stall the simulator', async () => {
  simulator.injectFault({ kind: 'oversized', bytes: 5_000_000 }, { times: 1 });
  const controller = new AbortController();
  const response = await rawExchange(undefined, { signal: controller.signal });
  const reader = response.body!.getReader();
  await reader.read();
  controller.abort();
  // The next call is answered normally.
  expect((await exchangeNewCode(simulator)).status).toBe(200);
});

test('hang: no headers ever arrive, and close() still returns', async () => {
  const hanging = await startSimulator();
  try {
    hanging.injectFault({ kind: 'hang' });
    const code = hanging.issueCode({ redirectUri: REDIRECT_URI });
    const pending = postTokenForm(hanging, exchangeParams(code), {
      signal: AbortSignal.timeout(500),
    });
    await expect(pending).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(hanging.calls.authorization_code).toBe(1);

    // A second hung request is still open when close() is called: close() ends it.
    const open = postTokenForm(hanging, { grant_type: 'refresh_token', refresh_token: 'any' });
    const outcome = open.then(
      () => 'answered',
      () => 'failed',
    );
    for (let i = 0; i < 200 && hanging.calls.refresh_token === 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(hanging.calls.refresh_token).toBe(1);
    await hanging.close();
    expect(await outcome).toBe('failed');
  } finally {
    await hanging.close();
  }
});

test('slow-body: headers at once, then the valid body trickled', async () => {
  simulator.injectFault({ kind: 'slow-body', bytesPerSecond: 1000 });
  const started = performance.now();
  const response = await rawExchange();
  expect(response.status).toBe(200);
  const length = Number(response.headers.get('content-length'));
  expect(length).toBeGreaterThan(200);
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('pragma')).toBe('no-cache');

  const text = await response.text();
  // 1000 B/s sends 100 bytes per 100 ms tick: more than 200 bytes need at least 3 ticks.
  expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  expect(Buffer.byteLength(text)).toBe(length);
  expect((JSON.parse(text) as { open_id: string }).open_id).toBe('player-ada');
});

test('reset: the connection is destroyed without an answer', async () => {
  simulator.injectFault({ kind: 'reset' }, { times: 1 });
  await expect(rawExchange()).rejects.toThrow('fetch failed');
  expect(simulator.calls.authorization_code).toBe(1);
  expect((await exchangeNewCode(simulator)).status).toBe(200);
});

test('redirect: 302 to the location given', async () => {
  simulator.injectFault({ kind: 'redirect', location: 'http://127.0.0.1:9/elsewhere' });
  const response = await rawExchange();
  expect(response.status).toBe(302);
  expect(response.headers.get('location')).toBe('http://127.0.0.1:9/elsewhere');
});

test('field: one field replaced, the rest of a normal answer intact', async () => {
  simulator.injectFault({ kind: 'field', field: 'expires_in', value: '7200' });
  const body = (await exchangeNewCode(simulator)).body;
  expect(body.expires_in).toBe('7200');
  expect(body.open_id).toBe('player-ada');
  expect(body.access_token).toEqual(expect.any(String));
});

test('field: remove drops the field', async () => {
  simulator.injectFault({ kind: 'field', field: 'open_id', remove: true });
  const body = (await exchangeNewCode(simulator)).body;
  expect(body).not.toHaveProperty('open_id');
  expect(body.access_token).toEqual(expect.any(String));
});

test('field: a __proto__ field becomes a real JSON key', async () => {
  simulator.injectFault({ kind: 'field', field: '__proto__', value: { polluted: true } });
  const response = await rawExchange();
  expect(await response.text()).toContain('"__proto__":{"polluted":true}');
});

test('faults count as calls of their grant type', async () => {
  simulator.injectFault({ kind: 'status', status: 502 });
  await (await rawExchange()).text();
  await (await rawExchange()).text();
  expect(simulator.calls).toEqual({
    authorization_code: 2,
    refresh_token: 0,
    invalid: 0,
    userinfo: 0,
  });
  simulator.resetCalls();
  expect(simulator.calls.authorization_code).toBe(0);
});

test('a fault limited to one grant leaves the other alone; times limits how often it applies', async () => {
  const tokens = await login(simulator);
  simulator.injectFault({ kind: 'status', status: 503 }, { grant: 'refresh_token', times: 2 });

  expect((await exchangeNewCode(simulator)).status).toBe(200);
  for (let i = 0; i < 2; i += 1) {
    const response = await postTokenForm(simulator, {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.refresh_token),
    });
    expect(response.status).toBe(503);
    await response.text();
  }
  expect((await refresh(simulator, tokens.refresh_token)).status).toBe(200);
});

test('faults apply in order of injection, and clearFaults removes them all', async () => {
  simulator.injectFault({ kind: 'status', status: 500 }, { times: 1 });
  simulator.injectFault({ kind: 'status', status: 502 });
  const statuses: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const response = await rawExchange();
    statuses.push(response.status);
    await response.text();
  }
  expect(statuses).toEqual([500, 502, 502]);
  simulator.clearFaults();
  expect((await rawExchange()).status).toBe(200);
});

test('a wrong fault is a SetupError (a wrong option) that says what is allowed', () => {
  expect(() => simulator.injectFault({ kind: 'explode' } as never)).toThrow(
    expect.objectContaining({ name: 'SetupError', code: 'ERR_PLATFORM_INVALID_OPTION' }),
  );
  expect(() => simulator.injectFault({ kind: 'explode' } as never)).toThrow(
    /latency, status, throttle, html/,
  );
  expect(() => simulator.injectFault({ kind: 'status', status: 99 })).toThrow(
    /`status`.*200 to 599/,
  );
  expect(() => simulator.injectFault({ kind: 'hang', ms: 1 } as never)).toThrow(
    /unknown option `ms`/,
  );
  expect(() => simulator.injectFault({ kind: 'hang' }, { times: 0 })).toThrow(/`times`/);
  expect(() => simulator.injectFault({ kind: 'hang' }, { grant: 'password' as never })).toThrow(
    /`grant`/,
  );
});
