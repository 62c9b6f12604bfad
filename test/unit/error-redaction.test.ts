// No secret, token, code or raw platform body reaches a message, util.inspect, JSON or String of a
// TokenSet or of any error the token client raises. Canary strings stand in for the secrets.
import { inspect } from 'node:util';
import { PlatformError, type PlatformErrorCode } from '../../lib/errors';
import { PlatformTokenClient } from '../../lib/client/token-client';
import type { PlatformTokenClientOptions } from '../../lib/client/token-client-options';
import { parseTokenResponse } from '../../lib/client/token-response';

const CANARY = {
  secret: 'CANARY-secret-91d2',
  code: 'CANARY-code-77aa',
  refreshSent: 'CANARY-refresh-sent-3b0e',
  access: 'CANARY-access-c0de',
  refresh: 'CANARY-refresh-f00d',
  body: 'CANARY-body-5eed',
};
const canaries = Object.values(CANARY);

/** Every way a value commonly ends up in a log. */
function exposures(value: unknown): string[] {
  const views = [
    String(value),
    `${value as string}`,
    inspect(value),
    inspect(value, { showHidden: true, depth: 10 }),
    JSON.stringify(value) ?? '',
    JSON.stringify({ wrapped: value }),
  ];
  if (value instanceof Error) {
    views.push(
      value.message,
      value.stack ?? '',
      inspect(value.cause),
      JSON.stringify(value.cause) ?? '',
    );
    views.push(JSON.stringify(Object.entries(value)), JSON.stringify({ ...value }));
  }
  return views;
}

function expectNoCanary(value: unknown): void {
  for (const view of exposures(value)) {
    for (const canary of canaries) expect(view).not.toContain(canary);
  }
}

const options = (fetchFn: typeof fetch, extra: Partial<PlatformTokenClientOptions> = {}) =>
  new PlatformTokenClient({
    authUrl: 'https://auth.platform.example',
    clientId: 'demo-game',
    clientSecret: CANARY.secret,
    redirectUri: 'https://game.example/cb',
    timeoutMs: 50,
    refreshRetries: 0,
    fetch: fetchFn,
    ...extra,
  });

const answering = (body: string, status = 200, type = 'application/json') =>
  (async () => new Response(body, { status, headers: { 'content-type': type } })) as typeof fetch;

/** Runs both grants against `fetchFn` and returns what they were rejected with. */
async function failuresOf(
  fetchFn: typeof fetch,
  extra?: Partial<PlatformTokenClientOptions>,
): Promise<unknown[]> {
  const client = options(fetchFn, extra);
  const results = await Promise.allSettled([
    client.exchangeCode(CANARY.code),
    client.refresh(CANARY.refreshSent),
  ]);
  return results.map((result) => {
    expect(result.status).toBe('rejected');
    return (result as PromiseRejectedResult).reason;
  });
}

const tokenBody = {
  access_token: CANARY.access,
  refresh_token: CANARY.refresh,
  expires_in: 7200,
  open_id: 'player-ada',
  scope: 'user_info',
};

describe('redaction of a TokenSet', () => {
  it('shows no token in inspect, JSON or String, while the tokens stay readable', () => {
    const tokens = parseTokenResponse(tokenBody, Date.now(), {
      grant: 'authorization_code',
      maxExpiresInSeconds: 86_400,
    });
    expect(tokens.accessToken).toBe(CANARY.access);
    expect(tokens.refreshToken).toBe(CANARY.refresh);
    expectNoCanary(tokens);
    expectNoCanary({ ...tokens });
    expect(inspect(tokens)).toContain('player-ada');
  });
});

describe('redaction of the errors the token client raises', () => {
  it.each<[string, typeof fetch, PlatformErrorCode]>([
    [
      'an OAuth error body that also carries tokens',
      answering(JSON.stringify({ error: 'invalid_grant', ...tokenBody }), 400),
      'ERR_PLATFORM_INVALID_GRANT',
    ],
    [
      'an error field with HTTP 200',
      answering(JSON.stringify({ ...tokenBody, error: 'invalid_client' })),
      'ERR_PLATFORM_INVALID_CLIENT',
    ],
    [
      'an HTML page',
      answering(`<html>${CANARY.body}</html>`, 200, 'text/html'),
      'ERR_PLATFORM_INVALID_RESPONSE',
    ],
    [
      'garbage',
      answering(`{"access_token":"${CANARY.access}",${CANARY.body}`),
      'ERR_PLATFORM_INVALID_RESPONSE',
    ],
    [
      'a 503 text body',
      answering(`down ${CANARY.body}`, 503, 'text/plain'),
      'ERR_PLATFORM_INVALID_RESPONSE',
    ],
    [
      'an invalid field next to valid tokens',
      answering(JSON.stringify({ ...tokenBody, expires_in: CANARY.body })),
      'ERR_PLATFORM_INVALID_RESPONSE',
    ],
    [
      'a numeric open_id next to valid tokens',
      answering(JSON.stringify({ ...tokenBody, open_id: 12345 })),
      'ERR_PLATFORM_INVALID_RESPONSE',
    ],
    [
      'an oversized body',
      answering(JSON.stringify({ ...tokenBody, padding: CANARY.body.repeat(10_000) })),
      'ERR_PLATFORM_INVALID_RESPONSE',
    ],
    [
      'a fetch failure whose message quotes the request',
      (async (url: string | URL | Request, init?: RequestInit) => {
        const failure = new TypeError(`fetch failed for ${String(url)} ${String(init?.body)}`, {
          cause: Object.assign(new Error(`connect ECONNREFUSED ${CANARY.secret}`), {
            code: 'ECONNREFUSED',
          }),
        });
        throw failure;
      }) as typeof fetch,
      'ERR_PLATFORM_NETWORK',
    ],
    [
      'a fetch that never answers',
      (() => new Promise<Response>(() => undefined)) as typeof fetch,
      'ERR_PLATFORM_TIMEOUT',
    ],
  ])('%s', async (_label, fetchFn, code) => {
    for (const error of await failuresOf(fetchFn)) {
      expect(error).toBeInstanceOf(PlatformError);
      expect(error).toHaveProperty('code', code);
      expectNoCanary(error);
    }
  });

  it('keeps the errno code of a network failure for diagnosis', async () => {
    const [error] = await failuresOf((async () => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error(`connect ECONNREFUSED ${CANARY.secret}`), {
          code: 'ECONNREFUSED',
        }),
      });
    }) as typeof fetch);
    expect((error as Error).cause).toEqual({ name: 'TypeError', code: 'ECONNREFUSED' });
  });

  it('does not name the request URL when the parameters travel in the query', async () => {
    let requestedUrl = '';
    const errors = await failuresOf(
      (async (url: string | URL | Request) => {
        requestedUrl = String(url);
        throw new TypeError(`fetch failed: ${requestedUrl}`);
      }) as typeof fetch,
      { refreshParameterPlacement: 'query' },
    );
    expect(requestedUrl).toContain(CANARY.refreshSent);
    for (const error of errors) {
      expectNoCanary(error);
      expect((error as Error).message).toContain('https://auth.platform.example/token');
    }
  });
});
