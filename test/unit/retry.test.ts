// The retry policy of refresh: what is transient, how Retry-After is read, the jittered backoff, and
// the client's retry loop driven through an injected fetch.
import fc from 'fast-check';
import { invalidTokenResponse, PlatformError, tokenEndpointRefused } from '../../lib/errors';
import {
  isTransientFailure,
  parseRetryAfterMs,
  retryDelayMs,
  type RetryPolicy,
} from '../../lib/client/retry';
import { PlatformTokenClient } from '../../lib/client/token-client';

const refused = (oauthError: string, httpStatus: number) =>
  tokenEndpointRefused({ oauthError, httpStatus, grant: 'refresh_token' });
const invalid = (httpStatus: number) =>
  invalidTokenResponse('The token endpoint answered badly.', { httpStatus });

describe('isTransientFailure', () => {
  it.each<[string, unknown, boolean]>([
    ['a network error', new PlatformError('unreachable', { code: 'ERR_PLATFORM_NETWORK' }), true],
    ['a timeout', new PlatformError('slow', { code: 'ERR_PLATFORM_TIMEOUT' }), true],
    ['HTTP 503 without an OAuth body', invalid(503), true],
    ['HTTP 500 without an OAuth body', invalid(500), true],
    ['HTTP 429 without an OAuth body', invalid(429), true],
    ['HTTP 503 with server_error', refused('server_error', 503), true],
    ['HTTP 200 with temporarily_unavailable', refused('temporarily_unavailable', 200), true],
    ['invalid_grant, even with HTTP 503', refused('invalid_grant', 503), false],
    ['invalid_client, even with HTTP 500', refused('invalid_client', 500), false],
    ['HTTP 400 invalid_request', refused('invalid_request', 400), false],
    ['HTTP 404 without an OAuth body', invalid(404), false],
    ['a 200 with a broken body', invalid(200), false],
    ['a redirect', invalid(302), false],
    ['a plain Error', new Error('boom'), false],
  ])('%s → %p', (_label, error, transient) => {
    expect(isTransientFailure(error)).toBe(transient);
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.UTC(2030, 0, 1, 12, 0, 0);

  it.each<[string | null | undefined, number | undefined]>([
    ['3', 3000],
    [' 0 ', 0],
    ['120', 120_000],
    [new Date(now + 5000).toUTCString(), 5000],
    [new Date(now - 60_000).toUTCString(), 0],
    ['soon', undefined],
    ['1.5', undefined],
    ['-1', undefined],
    ['', undefined],
    [null, undefined],
    [undefined, undefined],
  ])('reads %p as %p ms', (header, expected) => {
    expect(parseRetryAfterMs(header, now)).toBe(expected);
  });
});

describe('the backoff of retryDelayMs', () => {
  const transient = { error: invalid(503) };
  const backoffDelayMs = (attempt: number, base: number, max: number, random: () => number) =>
    retryDelayMs(
      transient,
      attempt,
      { refreshRetries: 11, retryBaseDelayMs: base, maxRetryDelayMs: max },
      random,
    )!;

  it('doubles the ceiling with each attempt and never exceeds the maximum', () => {
    const almostOne = () => 0.999_999;
    expect(backoffDelayMs(0, 200, 2000, almostOne)).toBe(199);
    expect(backoffDelayMs(1, 200, 2000, almostOne)).toBe(399);
    expect(backoffDelayMs(2, 200, 2000, almostOne)).toBe(799);
    expect(backoffDelayMs(5, 200, 2000, almostOne)).toBe(1999);
    expect(backoffDelayMs(3, 200, 2000, () => 0)).toBe(0);
  });

  it('stays within [0, min(max, base * 2^attempt)) for any jitter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, base, max, jitter) => {
          const delay = backoffDelayMs(attempt, base, max, () => jitter);
          const ceiling = Math.min(max, base * 2 ** attempt);
          return Number.isInteger(delay) && delay >= 0 && (delay < ceiling || delay === 0);
        },
      ),
    );
  });
});

describe('retryDelayMs', () => {
  const policy: RetryPolicy = { refreshRetries: 2, retryBaseDelayMs: 200, maxRetryDelayMs: 2000 };
  const half = () => 0.5;

  it('retries a transient failure with the jittered backoff', () => {
    expect(retryDelayMs({ error: invalid(503) }, 0, policy, half)).toBe(100);
    expect(retryDelayMs({ error: invalid(503) }, 1, policy, half)).toBe(200);
  });

  it('stops when the retries are used up', () => {
    expect(retryDelayMs({ error: invalid(503) }, 2, policy, half)).toBeUndefined();
    expect(
      retryDelayMs({ error: invalid(503) }, 0, { ...policy, refreshRetries: 0 }, half),
    ).toBeUndefined();
  });

  it('never retries a failure that is not transient', () => {
    expect(retryDelayMs({ error: refused('invalid_grant', 400) }, 0, policy, half)).toBeUndefined();
  });

  it('waits at least the Retry-After that fits the budget', () => {
    expect(retryDelayMs({ error: invalid(429), retryAfterMs: 1000 }, 0, policy, half)).toBe(1000);
    expect(retryDelayMs({ error: invalid(429), retryAfterMs: 0 }, 0, policy, half)).toBe(100);
    expect(retryDelayMs({ error: invalid(429), retryAfterMs: 2000 }, 0, policy, half)).toBe(2000);
  });

  it('does not retry when Retry-After is beyond maxDelayMs', () => {
    expect(
      retryDelayMs({ error: invalid(429), retryAfterMs: 2001 }, 0, policy, half),
    ).toBeUndefined();
    expect(
      retryDelayMs({ error: invalid(503), retryAfterMs: 60_000 }, 0, policy, half),
    ).toBeUndefined();
  });
});

describe('PlatformTokenClient retry loop (injected fetch)', () => {
  const tokenBody = JSON.stringify({
    access_token: 'at-1',
    expires_in: 7200,
    refresh_token: 'rt-1',
    open_id: 'player-ada',
    scope: 'user_info',
  });

  /** A fetch that answers from a script, one entry per call, and counts the calls. */
  function scriptedFetch(script: Array<() => Response | Promise<Response>>) {
    const state = { calls: 0 };
    const fetchFn = (async () => {
      const next = script[Math.min(state.calls, script.length - 1)]!;
      state.calls += 1;
      return next();
    }) as typeof fetch;
    return { fetchFn, state };
  }

  const client = (fetchFn: typeof fetch, extra: Record<string, unknown> = {}) =>
    new PlatformTokenClient({
      authUrl: 'https://auth.platform.example',
      clientId: 'demo-game',
      clientSecret: 'demo-secret',
      redirectUri: 'https://game.example/cb',
      retryBaseDelayMs: 0,
      fetch: fetchFn,
      ...extra,
    });

  const unavailable = () => new Response('busy', { status: 503 });
  const ok = () => new Response(tokenBody, { status: 200 });

  it('retries a refresh after 503 and a dropped connection, then succeeds', async () => {
    const { fetchFn, state } = scriptedFetch([
      unavailable,
      () => Promise.reject(new TypeError('fetch failed')),
      ok,
    ]);
    const tokens = await client(fetchFn).refresh('rt-0');
    expect(tokens.accessToken).toBe('at-1');
    expect(state.calls).toBe(3);
  });

  it('gives up after refreshRetries retries with the last error', async () => {
    const { fetchFn, state } = scriptedFetch([unavailable]);
    await expect(client(fetchFn, { refreshRetries: 1 }).refresh('rt-0')).rejects.toMatchObject({
      code: 'ERR_PLATFORM_INVALID_RESPONSE',
      httpStatus: 503,
    });
    expect(state.calls).toBe(2);
  });

  it('does not retry invalid_grant', async () => {
    const { fetchFn, state } = scriptedFetch([
      () => new Response('{"error":"invalid_grant"}', { status: 400 }),
    ]);
    await expect(client(fetchFn).refresh('rt-0')).rejects.toMatchObject({
      code: 'ERR_PLATFORM_INVALID_GRANT',
    });
    expect(state.calls).toBe(1);
  });

  it('does not retry a 429 whose Retry-After exceeds maxRetryDelayMs', async () => {
    const { fetchFn, state } = scriptedFetch([
      () => new Response('slow down', { status: 429, headers: { 'retry-after': '3' } }),
      ok,
    ]);
    await expect(client(fetchFn, { maxRetryDelayMs: 1000 }).refresh('rt-0')).rejects.toMatchObject({
      httpStatus: 429,
    });
    expect(state.calls).toBe(1);
  });

  it('retries a 429 whose Retry-After fits maxRetryDelayMs', async () => {
    const { fetchFn, state } = scriptedFetch([
      () => new Response('slow down', { status: 429, headers: { 'retry-after': '0' } }),
      ok,
    ]);
    await expect(client(fetchFn).refresh('rt-0')).resolves.toBeDefined();
    expect(state.calls).toBe(2);
  });

  it('never retries the code exchange', async () => {
    const { fetchFn, state } = scriptedFetch([unavailable, ok]);
    await expect(client(fetchFn).exchangeCode('code-1')).rejects.toMatchObject({ httpStatus: 503 });
    expect(state.calls).toBe(1);
  });
});
