// PlatformTokenClient against the real platform simulator over HTTP on 127.0.0.1: both grants, every
// parameter placement and encoding, every fault of the simulator, the timeout, the size cap and the
// retry policy (counted by the simulator).
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import {
  DEMO_CLIENT_ID,
  DEMO_CLIENT_SECRET,
  startSimulator,
  type PlatformSimulator,
} from 'express-platform-login/simulator';
import { PlatformError, type PlatformErrorCode } from '../../lib/errors';

/** A PlatformError with one of `codes`. */
function expectPlatformError(error: unknown, ...codes: PlatformErrorCode[]): void {
  expect(error).toBeInstanceOf(PlatformError);
  expect(codes).toContain((error as PlatformError).code);
}
/** The codes of an OAuth error answered by the token endpoint. */
const OAUTH_ERROR_CODES: PlatformErrorCode[] = [
  'ERR_PLATFORM_INVALID_GRANT',
  'ERR_PLATFORM_INVALID_CLIENT',
  'ERR_PLATFORM_REFUSED',
];
import { PlatformTokenClient } from '../../lib/client/token-client';
import type { PlatformTokenClientOptions } from '../../lib/client/token-client-options';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';
import { stall } from '../helpers/stalled-answer';

// A query string and percent-encoding: it must reach the platform exactly as configured.
const REDIRECT_URI =
  'http://127.0.0.1:3999/platform/callback?next=%2Fplay%3Flevel%3D2&x=a+b&y=%C3%A9';

/** One request as it arrived at the recording proxy. */
interface RecordedRequest {
  method: string;
  url: string;
  contentType: string | undefined;
  accept: string | undefined;
  body: string;
}

/** A pass-through HTTP proxy on 127.0.0.1 that records each request before forwarding it. */
async function startRecordingProxy(targetUrl: string) {
  const target = new URL(targetUrl);
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        contentType: req.headers['content-type'],
        accept: req.headers.accept,
        body: body.toString('utf8'),
      });
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent: false,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const paramsOf = (recorded: RecordedRequest): Record<string, string> => {
  if (recorded.contentType === 'application/json') return JSON.parse(recorded.body);
  const query = new URL(recorded.url, 'http://placeholder').searchParams;
  const source = recorded.body === '' ? query : new URLSearchParams(recorded.body);
  return Object.fromEntries(source);
};

let sim: PlatformSimulator;

beforeEach(async () => {
  sim = await startSimulator();
});

afterEach(async () => {
  await sim.close();
});

const clientFor = (authUrl: string, extra: Partial<PlatformTokenClientOptions> = {}) =>
  new PlatformTokenClient({
    authUrl,
    clientId: DEMO_CLIENT_ID,
    clientSecret: DEMO_CLIENT_SECRET,
    redirectUri: REDIRECT_URI,
    // Generous for a loaded machine; the timeout tests set their own short deadline.
    timeoutMs: 2000,
    retryBaseDelayMs: 10,
    ...extra,
  });
const client = (extra?: Partial<PlatformTokenClientOptions>) => clientFor(sim.url, extra);
const issue = () => sim.issueCode({ redirectUri: REDIRECT_URI });

/** Logs a player in and returns the refresh token, with the call counts reset afterwards. */
async function loggedIn(): Promise<string> {
  const tokens = await client().exchangeCode(issue());
  sim.resetCalls();
  return tokens.refreshToken;
}

async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail');
}

describe('both grants', () => {
  it('exchanges a code for a validated token set that expires from the moment of sending', async () => {
    const before = Date.now();
    const tokens = await client().exchangeCode(issue());
    const after = Date.now();
    expect(tokens.openId).toBe('player-ada');
    expect(tokens.unionId).toBe('union-ada');
    expect(tokens.scope).toEqual(['user_info', 'basic_actions']);
    expect(tokens.expiresIn).toBe(7200);
    expect(tokens.expiresAt).toBeGreaterThanOrEqual(before + 7_200_000);
    expect(tokens.expiresAt).toBeLessThanOrEqual(after + 7_200_000);
    expect(tokens.accessToken.length).toBeGreaterThan(0);
    expect(sim.calls.authorization_code).toBe(1);
  });

  it('refreshes: an unexpired access token comes back the same with a renewed expiry', async () => {
    const first = await client().exchangeCode(issue());
    const renewed = await client().refresh(first.refreshToken);
    expect(renewed.accessToken).toBe(first.accessToken);
    expect(renewed.refreshToken).toBe(first.refreshToken);
    expect(renewed.openId).toBe('player-ada');
    expect(renewed.expiresAt).toBeGreaterThanOrEqual(first.expiresAt);
    expect(sim.calls.refresh_token).toBe(1);
  });

  it('takes the new refresh token when the platform rotates it', async () => {
    sim.setRotation(true);
    const first = await client().exchangeCode(issue());
    const renewed = await client().refresh(first.refreshToken);
    expect(renewed.refreshToken).not.toBe(first.refreshToken);
    const error = await rejectionOf(client().refresh(first.refreshToken));
    expectPlatformError(error, ...OAUTH_ERROR_CODES);
    expect((error as PlatformError).code).toBe('ERR_PLATFORM_INVALID_GRANT');
  });

  it('reports a code used twice as invalid_grant (HTTP 400)', async () => {
    const code = issue();
    await client().exchangeCode(code);
    const error = await rejectionOf(client().exchangeCode(code));
    expectPlatformError(error, ...OAUTH_ERROR_CODES);
    expect(error).toMatchObject({ code: 'ERR_PLATFORM_INVALID_GRANT', httpStatus: 400 });
  });

  it('reports a wrong client secret as invalid_client (HTTP 401)', async () => {
    const error = await rejectionOf(
      client({ clientSecret: 'not-the-secret' }).exchangeCode(issue()),
    );
    expect(error).toMatchObject({
      code: 'ERR_PLATFORM_INVALID_CLIENT',
      oauthError: 'invalid_client',
      httpStatus: 401,
    });
  });
});

describe('parameter placement and encoding', () => {
  let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;

  beforeEach(async () => {
    proxy = await startRecordingProxy(sim.url);
  });

  afterEach(async () => {
    await proxy.close();
  });

  it('sends a form body by default, with redirect_uri byte for byte, and the platform accepts it', async () => {
    const tokens = await clientFor(proxy.url).exchangeCode(issue());
    await clientFor(proxy.url).refresh(tokens.refreshToken);
    expect(sim.calls).toMatchObject({ authorization_code: 1, refresh_token: 1, invalid: 0 });
    const [exchange, refresh] = proxy.requests;
    expect(exchange).toMatchObject({
      method: 'POST',
      url: '/token',
      contentType: 'application/x-www-form-urlencoded',
      accept: 'application/json',
    });
    expect(paramsOf(exchange!)).toEqual({
      grant_type: 'authorization_code',
      code: expect.any(String),
      client_id: DEMO_CLIENT_ID,
      client_secret: DEMO_CLIENT_SECRET,
      redirect_uri: REDIRECT_URI,
    });
    expect(refresh).toMatchObject({
      url: '/token',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(paramsOf(refresh!)).toEqual({
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken,
      client_id: DEMO_CLIENT_ID,
      client_secret: DEMO_CLIENT_SECRET,
      redirect_uri: REDIRECT_URI,
    });
  });

  it('is refused when the redirect_uri differs from the registered one by its encoding only', async () => {
    const decoded = 'http://127.0.0.1:3999/platform/callback?next=/play?level=2&x=a+b&y=%C3%A9';
    const error = await rejectionOf(client({ redirectUri: decoded }).exchangeCode(issue()));
    expect(error).toMatchObject({ code: 'ERR_PLATFORM_INVALID_GRANT' });
  });

  it('sends a JSON body when bodyEncoding is json, and the platform accepts it', async () => {
    const json = clientFor(proxy.url, { bodyEncoding: 'json' });
    const tokens = await json.exchangeCode(issue());
    await json.refresh(tokens.refreshToken);
    expect(sim.calls).toMatchObject({ authorization_code: 1, refresh_token: 1, invalid: 0 });
    for (const recorded of proxy.requests) {
      expect(recorded).toMatchObject({ url: '/token', contentType: 'application/json' });
      expect(JSON.parse(recorded.body).redirect_uri).toBe(REDIRECT_URI);
    }
    expect(JSON.parse(proxy.requests[1]!.body)).toMatchObject({
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken,
    });
  });

  it('puts the refresh parameters in the query string when so configured, and the platform accepts it', async () => {
    const tokens = await client().exchangeCode(issue());
    const renewed = await clientFor(proxy.url, { refreshParameterPlacement: 'query' }).refresh(
      tokens.refreshToken,
    );
    expect(renewed.accessToken).toBe(tokens.accessToken);
    expect(sim.calls.refresh_token).toBe(1);
    const [refresh] = proxy.requests;
    expect(refresh!.body).toBe('');
    expect(refresh!.contentType).toBeUndefined();
    const query = Object.fromEntries(new URL(refresh!.url, 'http://placeholder').searchParams);
    expect(query).toEqual({
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken,
      client_id: DEMO_CLIENT_ID,
      client_secret: DEMO_CLIENT_SECRET,
      redirect_uri: REDIRECT_URI,
    });
  });

  it('leaves the client credentials out of a refresh when sendClientCredentialsOnRefresh is false', async () => {
    const refreshToken = await loggedIn();
    // A wrong secret proves the point: sent, the platform would answer invalid_client.
    const wrongSecret = { clientSecret: 'not-the-secret' };
    const withCredentials = await rejectionOf(
      clientFor(proxy.url, wrongSecret).refresh(refreshToken),
    );
    expect(withCredentials).toMatchObject({ code: 'ERR_PLATFORM_INVALID_CLIENT' });
    const renewed = await clientFor(proxy.url, {
      ...wrongSecret,
      sendClientCredentialsOnRefresh: false,
    }).refresh(refreshToken);
    expect(renewed.openId).toBe('player-ada');
    expect(paramsOf(proxy.requests[1]!)).toEqual({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
    });
  });
});

describe('faults of the platform', () => {
  it.each<[string, Parameters<PlatformSimulator['injectFault']>[0], RegExp]>([
    ['an HTML page', { kind: 'html' }, /an HTML page instead of JSON/],
    ['malformed JSON', { kind: 'malformed-json' }, /not JSON \(content-type application\/json\)/],
    ['an empty body', { kind: 'empty' }, /an empty body/],
    ['HTTP 500', { kind: 'status', status: 500 }, /HTTP 500 and a body that is not JSON/],
    ['HTTP 502', { kind: 'status', status: 502 }, /HTTP 502/],
    ['HTTP 404', { kind: 'status', status: 404 }, /HTTP 404/],
  ])('%s is an ERR_PLATFORM_INVALID_RESPONSE', async (_label, fault, message) => {
    sim.injectFault(fault);
    const error = await rejectionOf(client().exchangeCode(issue()));
    expectPlatformError(error, 'ERR_PLATFORM_INVALID_RESPONSE');
    expect(error.message).toMatch(message);
    expect(sim.calls.authorization_code).toBe(1);
  });

  it('an error body with HTTP 200 is an OAuth error (PlatformError)', async () => {
    sim.injectFault({ kind: 'error-body-200', error: 'invalid_grant', errorDescription: 'used' });
    const error = await rejectionOf(client().exchangeCode(issue()));
    expectPlatformError(error, ...OAUTH_ERROR_CODES);
    expect(error).toMatchObject({
      code: 'ERR_PLATFORM_INVALID_GRANT',
      httpStatus: 200,
      oauthErrorDescription: 'used',
    });
  });

  it('a reset connection is an ERR_PLATFORM_NETWORK', async () => {
    sim.injectFault({ kind: 'reset' });
    const error = await rejectionOf(client().exchangeCode(issue()));
    expectPlatformError(error, 'ERR_PLATFORM_NETWORK');
  });

  it('a refused connection is an ERR_PLATFORM_NETWORK', async () => {
    const { url } = sim;
    await sim.close();
    const error = await rejectionOf(clientFor(url).exchangeCode('some-code'));
    expectPlatformError(error, 'ERR_PLATFORM_NETWORK');
    expect(error.cause).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('a hang times out after timeoutMs', async () => {
    sim.injectFault({ kind: 'hang' });
    const startedAt = Date.now();
    const error = await rejectionOf(client({ timeoutMs: 300 }).exchangeCode(issue()));
    expectPlatformError(error, 'ERR_PLATFORM_TIMEOUT');
    expect(error.message).toContain('300 ms');
    expect(Date.now() - startedAt).toBeLessThan(2500 + LOAD_ALLOWANCE_MS);
  });

  it('a body trickling after prompt headers times out too: the deadline covers the body', async () => {
    sim.injectFault({ kind: 'slow-body', bytesPerSecond: 20 });
    const startedAt = Date.now();
    const error = await rejectionOf(client({ timeoutMs: 300 }).exchangeCode(issue()));
    expectPlatformError(error, 'ERR_PLATFORM_TIMEOUT');
    expect(Date.now() - startedAt).toBeLessThan(2500 + LOAD_ALLOWANCE_MS);
  });

  it('latency within the timeout is waited for', async () => {
    sim.injectFault({ kind: 'latency', ms: 50 });
    await expect(client().exchangeCode(issue())).resolves.toMatchObject({ openId: 'player-ada' });
  });

  it('an answer that arrived while the process stalled past the timeout is taken, not retried', async () => {
    // A platform in this process that answers, then stalls the event loop (a GC pause, a loaded
    // machine) past the client's deadline before the client reads the answer. The stall outlasts
    // the whole timeout, so the deadline falls in it however late the request arrived (a loaded
    // machine may take a few hundred ms over it); the timeout is long enough for it to arrive.
    const timeoutMs = 1000;
    let calls = 0;
    const platform = createServer((_req, res) => {
      calls += 1;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          access_token: 'stalled-access',
          refresh_token: 'stalled-refresh',
          expires_in: 7200,
          open_id: 'player-ada',
          scope: 'base',
        }),
      );
      stall(timeoutMs + 100);
    });
    await new Promise<void>((resolve) => platform.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(platform.address() as AddressInfo).port}`;
      await expect(clientFor(url, { timeoutMs }).refresh('r-1')).resolves.toMatchObject({
        accessToken: 'stalled-access',
      });
      expect(calls).toBe(1);
    } finally {
      platform.closeAllConnections();
      platform.close();
    }
  });

  it('latency beyond the timeout is an ERR_PLATFORM_TIMEOUT', async () => {
    sim.injectFault({ kind: 'latency', ms: 5000 });
    const error = await rejectionOf(client({ timeoutMs: 300 }).exchangeCode(issue()));
    expectPlatformError(error, 'ERR_PLATFORM_TIMEOUT');
  });

  it('an oversized body is refused at maxResponseBytes', async () => {
    sim.injectFault({ kind: 'oversized', bytes: 1024 * 1024 });
    const error = await rejectionOf(client().exchangeCode(issue()));
    expectPlatformError(error, 'ERR_PLATFORM_INVALID_RESPONSE');
    expect(error.message).toContain('maxResponseBytes (65536 bytes)');
  });

  it('a compressed body is counted as it decompresses: a small declared length does not pass the cap', async () => {
    // 200 kB of JSON, gzipped to a few hundred bytes (Content-Length is the compressed size).
    const json = JSON.stringify({ access_token: 'a', padding: 'x'.repeat(200_000) });
    const gzipped = gzipSync(json);
    const server = createServer((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': gzipped.length,
      });
      res.end(gzipped);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const error = await rejectionOf(
        clientFor(`http://127.0.0.1:${port}`).exchangeCode('some-code'),
      );
      expectPlatformError(error, 'ERR_PLATFORM_INVALID_RESPONSE');
      expect(error.message).toContain('maxResponseBytes (65536 bytes)');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a padded body within maxResponseBytes is accepted, the unknown field ignored', async () => {
    sim.injectFault({ kind: 'oversized', bytes: 20_000 });
    const tokens = await client({ maxResponseBytes: 30_000 }).exchangeCode(issue());
    expect(tokens.openId).toBe('player-ada');
    expect(JSON.stringify(tokens)).not.toContain('padding');
  });

  it('a redirect is an ERR_PLATFORM_INVALID_RESPONSE and is not followed', async () => {
    const elsewhere = await startSimulator();
    try {
      sim.injectFault({ kind: 'redirect', location: `${elsewhere.url}/token` });
      const error = await rejectionOf(client().exchangeCode(issue()));
      expectPlatformError(error, 'ERR_PLATFORM_INVALID_RESPONSE');
      expect(error).toMatchObject({ httpStatus: 302 });
      expect(elsewhere.calls).toMatchObject({ authorization_code: 0, invalid: 0 });
    } finally {
      await elsewhere.close();
    }
  });

  const OPEN_ID = 'open_id must be a non-empty string';
  const EXPIRES_IN = 'expires_in must be a positive number of seconds';
  it.each<[string, string, unknown, string]>([
    ['open_id as a number', 'open_id', 12345, OPEN_ID],
    ['open_id empty', 'open_id', '', OPEN_ID],
    ['expires_in negative', 'expires_in', -1, EXPIRES_IN],
    ['expires_in a word', 'expires_in', 'forever', EXPIRES_IN],
  ])('%s is refused, naming %s', async (_label, field, value, message) => {
    sim.injectFault({ kind: 'field', field, value });
    const error = await rejectionOf(client().exchangeCode(issue()));
    expect(error).toMatchObject({ field });
    expect(error.message).toContain(message);
  });

  it('accepts expires_in as a numeric string and caps it at maxExpiresInSeconds', async () => {
    sim.injectFault({ kind: 'field', field: 'expires_in', value: '99999999' }, { times: 1 });
    const tokens = await client({ maxExpiresInSeconds: 3600 }).exchangeCode(issue());
    expect(tokens.expiresIn).toBe(3600);
  });

  it('a missing access_token is refused', async () => {
    sim.injectFault({ kind: 'field', field: 'access_token', remove: true });
    const error = await rejectionOf(client().exchangeCode(issue()));
    expect(error).toMatchObject({ field: 'access_token' });
  });

  it('a refresh answer without refresh_token keeps the one sent', async () => {
    const refreshToken = await loggedIn();
    sim.injectFault({ kind: 'field', field: 'refresh_token', remove: true });
    const renewed = await client().refresh(refreshToken);
    expect(renewed.refreshToken).toBe(refreshToken);
  });

  it('a __proto__ field in the answer is ignored and pollutes nothing', async () => {
    sim.injectFault({
      kind: 'field',
      field: '__proto__',
      value: { polluted: true, openId: 'evil' },
    });
    const tokens = await client().exchangeCode(issue());
    expect(tokens.openId).toBe('player-ada');
    expect((tokens as unknown as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('retries', () => {
  it('retries a refresh after a 503 and succeeds on the second call', async () => {
    const refreshToken = await loggedIn();
    sim.injectFault({ kind: 'status', status: 503 }, { grant: 'refresh_token', times: 1 });
    await expect(client().refresh(refreshToken)).resolves.toMatchObject({ openId: 'player-ada' });
    expect(sim.calls.refresh_token).toBe(2);
  });

  it('retries twice at most, then fails with the last error (3 calls)', async () => {
    const refreshToken = await loggedIn();
    sim.injectFault({ kind: 'status', status: 503 }, { grant: 'refresh_token' });
    const error = await rejectionOf(client().refresh(refreshToken));
    expect(error).toMatchObject({ code: 'ERR_PLATFORM_INVALID_RESPONSE', httpStatus: 503 });
    expect(sim.calls.refresh_token).toBe(3);
  });

  it('retries a refresh after a reset and after a hang', async () => {
    const refreshToken = await loggedIn();
    sim.injectFault({ kind: 'reset' }, { grant: 'refresh_token', times: 1 });
    sim.injectFault({ kind: 'hang' }, { grant: 'refresh_token', times: 1 });
    await expect(client({ timeoutMs: 1500 }).refresh(refreshToken)).resolves.toMatchObject({
      openId: 'player-ada',
    });
    expect(sim.calls.refresh_token).toBe(3);
  });

  it('does not retry invalid_grant', async () => {
    const refreshToken = await loggedIn();
    sim.revokeRefreshTokens();
    const error = await rejectionOf(client().refresh(refreshToken));
    expect(error).toMatchObject({ code: 'ERR_PLATFORM_INVALID_GRANT' });
    expect(sim.calls.refresh_token).toBe(1);
  });

  it('never retries the code exchange, not even after a 503', async () => {
    sim.injectFault({ kind: 'status', status: 503 }, { times: 1 });
    const error = await rejectionOf(client().exchangeCode(issue()));
    expect(error).toMatchObject({ httpStatus: 503 });
    expect(sim.calls.authorization_code).toBe(1);
  });

  it('does not retry a 429 whose Retry-After is beyond maxRetryDelayMs', async () => {
    const refreshToken = await loggedIn();
    sim.injectFault({ kind: 'status', status: 429, retryAfterSeconds: 10 }, { times: 1 });
    const error = await rejectionOf(client({ maxRetryDelayMs: 1000 }).refresh(refreshToken));
    // The error carries the platform's Retry-After: the refresh holds every process back that long.
    expect(error).toMatchObject({ httpStatus: 429, platformRetryAfterSeconds: 10 });
    expect(sim.calls.refresh_token).toBe(1);
  });

  it('retries a 429 whose Retry-After fits maxRetryDelayMs', async () => {
    const refreshToken = await loggedIn();
    sim.injectFault({ kind: 'status', status: 429, retryAfterSeconds: 0 }, { times: 1 });
    await expect(client().refresh(refreshToken)).resolves.toMatchObject({ openId: 'player-ada' });
    expect(sim.calls.refresh_token).toBe(2);
  });
});

describe('the transport', () => {
  const TOKEN_JSON = JSON.stringify({
    access_token: 'access-token-1',
    expires_in: 7200,
    refresh_token: 'refresh-token-1',
    open_id: 'player-grace',
    scope: 'user_info',
  });

  /** A token endpoint answering each request with `answer`; counts the TCP connections it accepts. */
  async function startEndpoint(
    answer: (res: import('node:http').ServerResponse) => void,
  ): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
    let connections = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(res));
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      connections: () => connections,
      close: async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }

  it('keeps the connection alive: five exchanges in a row reach the platform over one', async () => {
    const endpoint = await startEndpoint((res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(TOKEN_JSON),
    );
    try {
      for (let i = 0; i < 5; i += 1)
        await expect(clientFor(endpoint.url).exchangeCode(`code-${i}`)).resolves.toMatchObject({
          openId: 'player-grace',
        });
      expect(endpoint.connections()).toBe(1);
    } finally {
      await endpoint.close();
    }
  });

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('a %s-coded answer within the cap is decoded', async (coding, encode) => {
    const endpoint = await startEndpoint((res) =>
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding })
        .end(encode(TOKEN_JSON)),
    );
    try {
      await expect(clientFor(endpoint.url).exchangeCode('some-code')).resolves.toMatchObject({
        accessToken: 'access-token-1',
        openId: 'player-grace',
      });
    } finally {
      await endpoint.close();
    }
  });

  it('an unknown coding, even one named like an object member, is read as it came', async () => {
    const endpoint = await startEndpoint((res) =>
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'constructor' })
        .end(TOKEN_JSON),
    );
    try {
      await expect(clientFor(endpoint.url).exchangeCode('some-code')).resolves.toMatchObject({
        openId: 'player-grace',
      });
    } finally {
      await endpoint.close();
    }
  });

  it('an answer cut off before its declared length is an ERR_PLATFORM_NETWORK', async () => {
    const endpoint = await startEndpoint((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write(TOKEN_JSON.slice(0, 20));
      setTimeout(() => res.destroy(), 20);
    });
    try {
      const error = await rejectionOf(clientFor(endpoint.url).exchangeCode('some-code'));
      expectPlatformError(error, 'ERR_PLATFORM_NETWORK');
    } finally {
      await endpoint.close();
    }
  });

  it('a fetch passed in carries the token requests', async () => {
    const urls: string[] = [];
    const fetchSpy: typeof fetch = (input, init) => {
      urls.push(String(input));
      return fetch(input, init);
    };
    await expect(client({ fetch: fetchSpy }).exchangeCode(issue())).resolves.toMatchObject({
      openId: 'player-ada',
    });
    expect(urls).toEqual([`${sim.url}/token`]);
    expect(sim.calls.authorization_code).toBe(1);
  });

  it('a fetch passed in that ignores the deadline still ends as ERR_PLATFORM_TIMEOUT', async () => {
    const neverAnswers: typeof fetch = () => new Promise(() => undefined);
    const neverEnds: typeof fetch = async () =>
      new Response(new ReadableStream({ pull: () => new Promise(() => undefined) }), {
        headers: { 'content-type': 'application/json' },
      });
    for (const fetchIgnoringSignal of [neverAnswers, neverEnds]) {
      const error = await rejectionOf(
        client({ fetch: fetchIgnoringSignal, timeoutMs: 50 }).exchangeCode('some-code'),
      );
      expectPlatformError(error, 'ERR_PLATFORM_TIMEOUT');
    }
  });
});
