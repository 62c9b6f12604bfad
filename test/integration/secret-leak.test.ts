// Runs every flow — entries, refreshes, platformFetch, logout and every error path — with canaries
// for the client secret, the codes, the tokens and the session ids, and fails if any canary shows up
// in what the package lets out: response bodies and headers (Set-Cookie included), console and
// stdout/stderr with debug logging on, the logger, event payloads, metrics, the session store, and
// util.inspect/JSON of every error it hands to the app.
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { format, inspect } from 'node:util';
import createDebug from 'debug';
import express, { type ErrorRequestHandler, type Express } from 'express';
import session from 'express-session';
import { Redis } from 'ioredis';
import request from 'supertest';
import {
  startSimulator,
  type PlatformSimulator,
  type SimulatorFault,
} from 'express-platform-login/simulator';
import {
  platformLogin,
  RedisTokenStore,
  type PlatformLogger,
  type PlatformLogin,
} from 'express-platform-login';
import { findLeaks, leakForms, type Canary, type Captured } from '../helpers/leak-scan';
import { createTestMeter, type TestMeter } from '../helpers/metrics';
import { expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { sessionCookieFrom, sessionIdFrom } from '../helpers/session-cookie';
import { entryApp, simulatorEntryContext, TEST_REDIRECT_URI } from '../helpers/test-app';
import { engineOf } from '../../lib/core/derived-engine';

const HOUR = 3600_000;
const CLIENT_ID = 'leak-game';
/** Characters that every encoding changes, so each form of the secret is a distinct text. */
const SECRET_RANDOM_PART = randomBytes(16).toString('hex');
const CLIENT_SECRET = `Canary+Secret/"<&>'=${SECRET_RANDOM_PART}`;
const JSON_ACCEPT = { Accept: 'application/json' };
const HTML_ACCEPT = { Accept: 'text/html' };
const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

let sim: PlatformSimulator;
let server: TestRedisServer;
let redis: Redis;
/** A client of a Redis user that may not run scripts: the store's compare-and-set writes fail. */
let noScripts: Redis;

/** What the run let out, and the secrets to look for in it. */
let captured: Captured[];
let canaries: Map<string, Canary>;

const remember = (label: string, value: string, allowedInHeaders = false): void => {
  canaries.set(value, { label, value, allowedInHeaders });
};
const see = (source: string, text: string | undefined): void => {
  captured.push({ source, text: text ?? '' });
};

beforeAll(async () => {
  sim = await startSimulator({ clients: [{ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }] });
  server = await startRedisServer();
  redis = new Redis(server.url);
  await redis.acl('SETUSER', 'no-scripts', 'on', '>pw', '~*', '+@all', '-eval', '-evalsha');
  noScripts = new Redis(server.url, { username: 'no-scripts', password: 'pw' });
});

afterAll(async () => {
  redis.disconnect();
  noScripts.disconnect();
  await server.stop();
  await sim.close();
});

beforeEach(() => {
  captured = [];
  canaries = new Map();
  remember('client secret', CLIENT_SECRET);
  // Text taken from the platform loses some characters (sanitizePlatformText): look for the rest too.
  remember('client secret (random part)', SECRET_RANDOM_PART);
  sim.clearFaults();
  sim.setRotation(false);
  // The package's default logger is `debug`: switch every namespace on, as an operator would.
  createDebug.enable('express-platform-login:*');
  for (const method of CONSOLE_METHODS) {
    jest.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      see(`console.${method}`, format(...args));
    });
  }
  for (const stream of ['stdout', 'stderr'] as const) {
    jest.spyOn(process[stream], 'write').mockImplementation(((chunk: string | Uint8Array) => {
      see(stream, Buffer.from(chunk).toString());
      return true;
    }) as typeof process.stdout.write);
  }
});

afterEach(() => {
  createDebug.disable();
  jest.restoreAllMocks();
});

/** A token store that remembers, as canaries, every token and session id the package writes. */
function rememberingStore(client: Redis): RedisTokenStore {
  const store = new RedisTokenStore({ redis: client, prefix: 'leak:' });
  const records = engineOf(store).records;
  const put = records.put.bind(records);
  // The store sees session keys (hashes) only; the session ids are remembered by the app below.
  records.put = (sessionKey, record, options) => {
    remember('access token', record.accessToken);
    remember('refresh token', record.refreshToken);
    return put(sessionKey, record, options);
  };
  return store;
}

/** A logger that keeps every line, debug level included. */
function recordingLogger(): PlatformLogger {
  const line =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void => {
      see(
        `logger.${level}`,
        `${message} ${JSON.stringify(fields)} ${inspect(fields, { depth: null })}`,
      );
    };
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}

/** Every view of an error an app might log. */
function seeError(error: unknown): void {
  const cause = (error as { cause?: unknown }).cause;
  see(
    `error ${(error as Error).name}`,
    [
      String(error),
      (error as Error).stack,
      inspect(error, { depth: null }),
      inspect(error, { depth: null, showHidden: true }),
      inspect(error, { depth: null, showHidden: true, customInspect: false }),
      JSON.stringify(error),
      inspect(cause, { depth: null, showHidden: true }),
      JSON.stringify(cause),
    ].join('\n'),
  );
}

interface LeakApp {
  app: Express;
  login: PlatformLogin;
  store: RedisTokenStore;
}

/** The game, as a studio would mount it; `handleErrors: false` adds an error recorder. */
function leakApp(
  handleErrors: boolean,
  client: Redis,
  sessionStore: session.Store,
  extra: { logger?: PlatformLogger; meter?: TestMeter },
): LeakApp {
  const store = rememberingStore(client);
  const login = platformLogin({
    authUrl: sim.url,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: TEST_REDIRECT_URI,
    ...simulatorEntryContext(sim),
    // Every flow runs back to back from one address, failed entries included, twice on one store:
    // the address's failure limit and the budget of addresses with a failed entry (entry-trust and
    // entry-throttle test both) would answer the later entries 429 instead of the flow's answer.
    entry: { ...simulatorEntryContext(sim).entry, failureLimit: 0, failedExchangesPerSecond: 0 },
    store,
    handleErrors,
    refresh: { failureCooldownSeconds: 0 },
    // Room for the simulator in this process on a loaded machine; the latency fault outlasts it.
    tokenClient: { timeoutMs: 1000, refreshRetries: 1, retryBaseDelayMs: 5 },
    ...(extra.logger ? { logger: extra.logger } : {}),
    ...(extra.meter ? { meterProvider: extra.meter.provider } : {}),
  });
  jest.spyOn(login, 'emit');
  const app = entryApp(login, {
    store: sessionStore,
    api: true,
    // Every session id a response carries (a login's is made by regenerate(), during the request).
    before: (app) =>
      app.use((req, res, next) => {
        res.on('finish', () => {
          if (req.sessionID) remember('session id', req.sessionID, true);
        });
        next();
      }),
  });
  // Uses the token both ways a handler can: directly and through the open API.
  app.get('/api/play', async (req, res, next) => {
    try {
      const token = await req.platformToken();
      const profile = await req.platformFetch('/userinfo');
      res.json({
        tokenLength: token.length,
        status: profile.status,
        profile: await profile.json(),
      });
    } catch (error) {
      next(error);
    }
  });
  // A handler's mistake: platformFetch refuses any address outside apiUrl (no request is made).
  app.get('/api/elsewhere', async (req, res, next) => {
    try {
      res.json(await req.platformFetch('http://127.0.0.1:1/collect'));
    } catch (error) {
      next(error);
    }
  });
  app.post('/logout', login.logout());
  if (!handleErrors) {
    app.use(((error, _req, _res, next) => {
      seeError(error);
      next(error);
    }) as ErrorRequestHandler);
  }
  app.use(login.errorHandler());
  return { app, login, store };
}

let requestCount = 0;
/** Sends `test`, records its answer (headers and body) and checks its status. */
async function send(test: request.Test, status: number): Promise<request.Response> {
  const res = await test;
  const req = (res as unknown as { req: { method: string; path: string } }).req;
  const label = `#${(requestCount += 1)} ${req.method} ${req.path.split('?')[0]}`;
  see(`${label} headers`, JSON.stringify(res.headers));
  see(`${label} body`, res.text);
  expect({ label, status: res.status }).toEqual({ label, status });
  return res;
}

/** Issues a code for `openId` and remembers it as a canary. */
function issue(openId = 'player-ada'): string {
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId });
  remember('code', code);
  return code;
}

/** A code-shaped value the platform never issued, remembered as a canary. */
function bogusCode(): string {
  const code = `bogus-${randomBytes(18).toString('base64url')}`;
  remember('code', code);
  return code;
}

const callback = (code: string): string => `/platform/callback?code=${encodeURIComponent(code)}`;

/** Faults of the token endpoint; each breaks a refresh (503) and an entry (502 or 504). */
const PLATFORM_FAULTS = (): [SimulatorFault, number][] => [
  [{ kind: 'status', status: 503 }, 502],
  [{ kind: 'status', status: 429, retryAfterSeconds: 30 }, 502],
  [{ kind: 'html' }, 502],
  [{ kind: 'malformed-json' }, 502],
  [{ kind: 'empty' }, 502],
  [{ kind: 'oversized', bytes: 200_000 }, 502],
  [{ kind: 'latency', ms: 3000 }, 504],
  [{ kind: 'slow-body', bytesPerSecond: 20 }, 504],
  [{ kind: 'reset' }, 502],
  [{ kind: 'redirect', location: `${sim.url}/elsewhere` }, 502],
  [{ kind: 'field', field: 'expires_in', value: 'soon' }, 502],
  [{ kind: 'field', field: 'open_id', value: 42 }, 502],
];

/** Every flow of the package against `game`; `broken` shares its sessions and records but cannot write them. */
async function runEveryFlow(game: LeakApp, broken: LeakApp): Promise<void> {
  const { app, store, login } = game;
  const expired = (sessionId: string) => rewriteRecord(store, sessionId, expiringIn(-1000));

  // Not logged in, in both answer formats.
  await send(request(app).get('/api/me').set(JSON_ACCEPT), 401);
  await send(request(app).get('/api/me').set(HTML_ACCEPT), 401);

  // Entries: a valid one, its reload, the same code in another browser, other methods, bad codes.
  const browser = request.agent(app);
  const first = issue();
  const sessionId = sessionIdFrom(await send(browser.get(callback(first)), 303));
  await send(browser.get(callback(first)), 303);
  await send(request(app).get(callback(first)).set(JSON_ACCEPT), 400);
  const unused = issue();
  await send(request(app).head(callback(unused)), 405);
  await send(request(app).post(callback(unused)).set(HTML_ACCEPT), 405);
  await send(
    request(app)
      .get(`${callback(bogusCode())}&code=${bogusCode()}`)
      .set(JSON_ACCEPT),
    400,
  );
  await send(
    request(app)
      .get(callback(bogusCode().repeat(20)))
      .set(HTML_ACCEPT),
    400,
  );
  await send(
    request(app)
      .get(`${callback(bogusCode())}%0A`)
      .set(JSON_ACCEPT),
    400,
  );
  await send(request(app).get(callback(bogusCode())).set(JSON_ACCEPT), 400); // code_rejected
  await send(request(app).get(`${callback(bogusCode())}&error=access_denied`), 403);

  // A fresh token, used directly and through the open API; a handler trying another address.
  await send(browser.get('/api/me'), 200);
  await send(browser.get('/api/play'), 200);
  await send(browser.get('/api/elsewhere').set(JSON_ACCEPT), 500);

  // Refreshes: before the handler (same token), expired (new token), in the background, forced by
  // the open API's 401, and with a rotated refresh token.
  await rewriteRecord(store, sessionId, expiringIn(30_000));
  await send(browser.get('/api/me'), 200);
  await expired(sessionId);
  sim.advanceClock(3 * 3600);
  await send(browser.get('/api/play'), 200);
  await rewriteRecord(store, sessionId, () => ({
    obtainedAt: Date.now() - 2 * HOUR,
    accessExpiresAt: Date.now() + HOUR,
  }));
  const background = once(login, 'refresh');
  await send(browser.get('/api/me'), 200);
  await background;
  sim.advanceClock(3 * 3600);
  await send(browser.get('/api/play'), 200);
  sim.setRotation(true);
  await expired(sessionId);
  sim.advanceClock(3 * 3600);
  await send(browser.get('/api/play'), 200);
  sim.setRotation(false);

  // The platform failing refreshes: expired token (503), still-valid token (served).
  for (const [fault] of PLATFORM_FAULTS()) {
    await expired(sessionId);
    sim.injectFault(fault, { grant: 'refresh_token' });
    await send(browser.get('/api/me').set(JSON_ACCEPT), 503);
    sim.clearFaults();
  }
  const { refreshToken } = (await storedRecord(store, sessionId))!;
  for (const fault of [
    { kind: 'error-body-200', error: 'server_error', errorDescription: 'temporarily down' },
    { kind: 'error-body-200', error: 'invalid_client' },
  ] as const) {
    await expired(sessionId);
    sim.injectFault(fault, { grant: 'refresh_token' });
    await send(browser.get('/api/play').set(HTML_ACCEPT), 503);
    sim.clearFaults();
  }
  await rewriteRecord(store, sessionId, expiringIn(20_000));
  sim.injectFault({ kind: 'status', status: 500 }, { grant: 'refresh_token' });
  await send(browser.get('/api/play'), 200);
  sim.clearFaults();
  expect((await storedRecord(store, sessionId))!.refreshToken).toBe(refreshToken);

  // Refreshes that end the login: another open_id, then a revoked refresh token.
  await expired(sessionId);
  sim.injectFault(
    { kind: 'field', field: 'open_id', value: 'player-bo' },
    { grant: 'refresh_token' },
  );
  await send(browser.get('/api/me').set(JSON_ACCEPT), 401);
  sim.clearFaults();
  const second = sessionIdFrom(await send(browser.get(callback(issue())), 303));
  await expired(second);
  sim.revokeRefreshTokens('player-ada');
  await send(browser.get('/api/play').set(HTML_ACCEPT), 401);

  // The platform failing entries, and echoing the code and the secret in its error description.
  for (const [fault, status] of PLATFORM_FAULTS()) {
    if ('retryAfterSeconds' in fault) continue; // it would hold the exchanges after it: below
    sim.injectFault(fault, { grant: 'authorization_code' });
    await send(request(app).get(callback(issue())).set(JSON_ACCEPT), status);
    sim.clearFaults();
  }
  // The platform's Retry-After holds every exchange (503 platform_busy) until it ends.
  sim.injectFault(
    { kind: 'status', status: 429, retryAfterSeconds: 1 },
    { grant: 'authorization_code' },
  );
  await send(request(app).get(callback(issue())).set(JSON_ACCEPT), 503);
  sim.clearFaults();
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const echoed = issue();
  sim.injectFault(
    {
      kind: 'error-body-200',
      error: 'invalid_request',
      errorDescription: `code ${echoed} with client_secret ${CLIENT_SECRET}`,
    },
    { grant: 'authorization_code' },
  );
  await send(request(app).get(callback(echoed)).set(JSON_ACCEPT), 502);
  sim.clearFaults();
  sim.injectFault(
    { kind: 'error-body-200', error: 'invalid_client' },
    { grant: 'authorization_code' },
  );
  await send(request(app).get(callback(issue())).set(JSON_ACCEPT), 503);
  sim.clearFaults();

  // Another player in the same browser (identity switch), then the token store refusing writes:
  // after an exchange (the new tokens are lost) and after a refresh.
  const bo = await send(browser.get(callback(issue('player-bo'))), 303);
  await send(request(broken.app).get(callback(issue())).set(JSON_ACCEPT), 503);
  await expired(sessionIdFrom(bo));
  sim.advanceClock(3 * 3600);
  const boCookie = sessionCookieFrom(bo);
  await send(request(broken.app).get('/api/play').set('Cookie', boCookie).set(JSON_ACCEPT), 503);

  // Without express-session in front (a set-up mistake, told on the console).
  const bare = express();
  bare.use('/platform/callback', login.callback);
  await send(request(bare).get(callback(issue())).set(JSON_ACCEPT), 500);

  // Logout, and the request after it.
  await send(browser.post('/logout'), 204);
  await send(browser.get('/api/me').set(JSON_ACCEPT), 401);
}

/** Records what the package keeps outside the requests: event payloads, the session store, metrics. */
async function seeTheRest(apps: LeakApp[], sessionStore: session.Store, meter: TestMeter) {
  for (const { login } of apps) {
    const emitted = jest.mocked(login.emit).mock.calls as unknown as [string, ...unknown[]][];
    for (const [name, ...payload] of emitted) {
      see(
        `event ${String(name)}`,
        `${JSON.stringify(payload)} ${inspect(payload, { depth: null })}`,
      );
    }
  }
  const sessions = await new Promise<unknown>((resolve, reject) =>
    sessionStore.all!((error, all) => (error ? reject(error) : resolve(all))),
  );
  see('session store', JSON.stringify(Object.values(sessions as object)));
  see('metrics', await meter.scrape());
}

test.each([
  ['answered by the package', true],
  ['passed to the app (handleErrors: false)', false],
])('no canary leaks, errors %s', async (_name, handleErrors) => {
  const meter = createTestMeter();
  try {
    const sessionStore = new session.MemoryStore();
    // The default logger (debug, on stderr) in one run, a logger option in the other.
    const extra = handleErrors ? { meter } : { meter, logger: recordingLogger() };
    const game = leakApp(handleErrors, redis, sessionStore, extra);
    const broken = leakApp(handleErrors, noScripts, sessionStore, extra);
    await runEveryFlow(game, broken);
    await seeTheRest([game, broken], sessionStore, meter);
  } finally {
    await meter.shutdown();
  }

  // The run really produced what is scanned: logs at debug level, events, errors, secrets.
  const logSource = handleErrors ? 'stderr' : 'logger.debug';
  expect(captured.some((c) => c.source === logSource && c.text.includes('token'))).toBe(true);
  expect(captured.filter((c) => c.source.startsWith('event ')).length).toBeGreaterThan(5);
  // The missing-session setup mistake is reported once, on the login's logger: the app's, or the
  // default (here `debug`, enabled above, which writes to stderr).
  const setupSource = handleErrors ? 'stderr' : 'logger.error';
  expect(
    captured.some((c) => c.source === setupSource && c.text.includes('needs express-session')),
  ).toBe(true);
  if (!handleErrors) {
    expect(captured.filter((c) => c.source.startsWith('error ')).length).toBeGreaterThan(30);
  }
  const labels = [...canaries.values()].map((c) => c.label);
  for (const label of ['client secret', 'code', 'access token', 'refresh token', 'session id']) {
    expect(labels).toContain(label);
  }
  expect(labels.filter((l) => l === 'access token').length).toBeGreaterThan(3);

  expect(findLeaks(captured, [...canaries.values()])).toEqual([]);
});

test('the scan finds a canary in every form, anywhere inside a longer value', () => {
  const canary: Canary = { label: 'client secret', value: CLIENT_SECRET };
  for (const [name, form] of leakForms(CLIENT_SECRET)) {
    for (const around of ['', 'x', 'xy']) {
      expect(findLeaks([{ source: name, text: `${around}${form}${around}` }], [canary])).toEqual([
        { source: name, canary: 'client secret', form: name },
      ]);
    }
  }
  for (const encoding of ['base64', 'base64url'] as const) {
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const text = Buffer.from(`${prefix}${CLIENT_SECRET}--`).toString(encoding);
      expect(findLeaks([{ source: encoding, text }], [canary])).toHaveLength(1);
    }
  }
  expect(findLeaks([{ source: 'a headers', text: CLIENT_SECRET }], [canary])).toHaveLength(1);
  const cookie: Canary = { label: 'session id', value: 'sid-123456789', allowedInHeaders: true };
  expect(findLeaks([{ source: 'a headers', text: 'sid-123456789' }], [cookie])).toEqual([]);
  expect(findLeaks([{ source: 'a body', text: 'sid-123456789' }], [cookie])).toHaveLength(1);
});
