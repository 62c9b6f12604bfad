// The token endpoint broken in every way the simulator can break it, at the code exchange and at the
// refresh, with tokens in the real Redis: each gives the README's documented answer, nothing is
// stored from a failed exchange, no stored token is lost, and the same login works once the
// platform is back.
import express from 'express';
import session from 'express-session';
import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import {
  startSimulator,
  type PlatformSimulator,
  type SimulatorFault,
} from 'express-platform-login/simulator';
import { RedisTokenStore, type PlatformLoginOptions } from 'express-platform-login';
import { freePort } from '../helpers/free-port';
import { expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { sessionCookieFrom, sessionIdFrom } from '../helpers/session-cookie';
import { createTestApp, TEST_REDIRECT_URI } from '../helpers/test-app';

/** Short attempts and one quick retry: a fault costs a few seconds, a loaded machine still logs in. */
const CLIENT = { timeoutMs: 2000, refreshRetries: 1, retryBaseDelayMs: 10, maxRetryDelayMs: 1500 };
const JSON_ACCEPT = { Accept: 'application/json' };

let redis: Redis;
/** What the tests opened, closed after the file (each hook is skipped for concurrent tests). */
const opened: { close(): Promise<unknown> | void }[] = [];
beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL!);
  // Each test's store listens to this client until the file ends: more than Node's default of 10
  // listeners an event, on purpose (redis-store-hygiene checks that a closed store leaves none).
  redis.setMaxListeners(100);
});
afterAll(async () => {
  for (const thing of opened.splice(0).reverse()) await thing.close();
  redis.disconnect();
});

/**
 * A simulator and Redis keys of the test's own, so that the tests, most of which wait out an
 * attempt's timeout, run side by side; and two apps (two processes, as far as the package can
 * tell) sharing the session store and the Redis token store: `app` talks to the simulator,
 * `unreachable` to a port where nothing listens.
 */
async function setUp(extra: Partial<PlatformLoginOptions> = {}) {
  const sim = await startSimulator();
  opened.push(sim);
  const prefix = `faults-${randomUUID().slice(0, 8)}:`;
  const store = new RedisTokenStore({ redis, prefix: `${prefix}t:` });
  opened.push(store);
  const sessionStore = new session.MemoryStore();
  // Every entry comes from 127.0.0.1, and an answer that is not tokens counts against its address:
  // the limit is raised and the budget off, so that the faults, not they, give each test its answers.
  const options = {
    store,
    tokenClient: CLIENT,
    entry: { failureLimit: 10_000, failedExchangesPerSecond: 0 },
    ...extra,
  };
  const { app } = createTestApp({ sim, sessionStore, login: options });
  const deadUrl = `http://127.0.0.1:${await freePort()}`;
  const unreachable = createTestApp({ sim, sessionStore, login: { ...options, authUrl: deadUrl } });
  /** Token records in Redis under this test's prefix. */
  const storedRecords = async (): Promise<number> => (await redis.keys(`${prefix}t:t:*`)).length;
  return { sim, app, unreachable: unreachable.app, store, storedRecords };
}

/** Enters through `app`; resolves the session cookie (to present to either app) and id. */
async function enter(sim: PlatformSimulator, app: express.Express) {
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
  const res = await request(app).get(`/platform/callback?code=${code}`).expect(303);
  return { cookie: sessionCookieFrom(res), sessionId: sessionIdFrom(res) };
}

const get = (app: express.Express | Server, path: string, cookie: string) =>
  request(app).get(path).set('Cookie', cookie).set(JSON_ACCEPT);

type Answer = readonly [number, string];
const PLATFORM_ERROR: Answer = [502, 'platform_error'];
const PLATFORM_TIMEOUT: Answer = [504, 'platform_timeout'];

/** Each fault and the documented answer of an entry it breaks (README "Errors"). */
const FAULTS: [string, SimulatorFault, Answer][] = [
  ['down (HTTP 503)', { kind: 'status', status: 503 }, PLATFORM_ERROR],
  ['slow: headers after the timeout', { kind: 'latency', ms: 6000 }, PLATFORM_TIMEOUT],
  [
    'slow: the body trickling byte by byte',
    { kind: 'slow-body', bytesPerSecond: 1 },
    PLATFORM_TIMEOUT,
  ],
  ['answering an HTML page', { kind: 'html' }, PLATFORM_ERROR],
  ['answering malformed JSON', { kind: 'malformed-json' }, PLATFORM_ERROR],
  [
    'answering 200 with an error body',
    { kind: 'error-body-200', error: 'server_error' },
    PLATFORM_ERROR,
  ],
  ['answering 10 MB', { kind: 'oversized', bytes: 10 * 1024 * 1024 }, PLATFORM_ERROR],
  [
    // Every exchange is held until the platform's time is over (docs/entry-trust.md).
    'answering 429 with Retry-After',
    { kind: 'status', status: 429, retryAfterSeconds: 1 },
    [503, 'platform_busy'],
  ],
  ['resetting the connection', { kind: 'reset' }, PLATFORM_ERROR],
];

// Every test on a simulator and keys of its own: they run side by side.
describe('at the code exchange', () => {
  test.concurrent.each(FAULTS)(
    'platform %s: the documented error, one attempt, nothing stored, the old login kept',
    async (_name, fault, [status, error]) => {
      const { sim, app, storedRecords } = await setUp();
      const agent = request.agent(app);
      await agent
        .get(`/platform/callback?code=${sim.issueCode({ redirectUri: TEST_REDIRECT_URI })}`)
        .expect(303);
      const records = await storedRecords();
      sim.resetCalls();

      sim.injectFault(fault, { grant: 'authorization_code' });
      const entry = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-bo' });
      const res = await agent.get(`/platform/callback?code=${entry}`).set(JSON_ACCEPT);
      expect([res.status, res.body]).toEqual([status, { error }]);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(sim.calls.authorization_code).toBe(1); // never retried once sent
      expect(await storedRecords()).toBe(records);
      // The browser's previous login is untouched.
      expect((await agent.get('/api/me').expect(200)).body.openId).toBe('player-ada');

      // Back to normal (after the platform's Retry-After, if it sent one), a new entry lands.
      sim.clearFaults();
      if ('retryAfterSeconds' in fault) await new Promise((resolve) => setTimeout(resolve, 1100));
      const next = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-bo' });
      await agent.get(`/platform/callback?code=${next}`).expect(303);
      expect((await agent.get('/api/me').expect(200)).body.openId).toBe('player-bo');
    },
  );

  test.concurrent(
    'platform down (nothing listening): 502 platform_error, nothing stored',
    async () => {
      const { sim, unreachable, storedRecords } = await setUp();
      const records = await storedRecords();
      const entry = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
      const res = await request(unreachable)
        .get(`/platform/callback?code=${entry}`)
        .set(JSON_ACCEPT);
      expect([res.status, res.body]).toEqual([502, { error: 'platform_error' }]);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(await storedRecords()).toBe(records);
    },
  );
});

describe('at the refresh', () => {
  const ALL_FAULTS = FAULTS.map(([name, fault]) => [name, fault] as const);

  /**
   * A logged-in player whose access token has expired asks for it while the token endpoint has
   * `fault`: the answer is 503 platform_unavailable. No cooldown after the failure, so a request
   * after the outage tries again at once.
   */
  async function expiredRefreshFailing(fault: SimulatorFault) {
    const { sim, app, store } = await setUp({ refresh: { failureCooldownSeconds: 0 } });
    const { cookie, sessionId } = await enter(sim, app);
    const before = await rewriteRecord(store, sessionId, expiringIn(-1000));
    sim.resetCalls();
    sim.injectFault(fault, { grant: 'refresh_token' });
    const res = await get(app, '/api/token', cookie);
    expect([res.status, res.body]).toEqual([503, { error: 'platform_unavailable' }]);
    return { sim, app, store, cookie, sessionId, before, res };
  }

  test.concurrent.each(
    ALL_FAULTS.filter(([, fault]) => fault.kind !== 'status' || fault.status !== 429),
  )(
    'platform %s, access token expired: 503 platform_unavailable with Retry-After, tokens kept, served once it is back',
    async (_name, fault) => {
      const { sim, app, store, cookie, sessionId, before, res } =
        await expiredRefreshFailing(fault);
      expect(res.headers['retry-after']).toBe('5');
      expect(sim.calls.refresh_token).toBeLessThanOrEqual(1 + CLIENT.refreshRetries);
      expect(await storedRecord(store, sessionId)).toEqual(before);

      sim.clearFaults();
      const back = await get(app, '/api/token', cookie);
      expect(back.status).toBe(200);
      expect((await storedRecord(store, sessionId))!.version).toBe(before.version + 1);
    },
  );

  test.concurrent.each([
    ['a 429 with its Retry-After', { kind: 'status', status: 429, retryAfterSeconds: 30 }],
    [
      'a throttle (429, OAuth body) with its Retry-After',
      { kind: 'throttle', retryAfterSeconds: 30 },
    ],
  ] as const)(
    "platform answering %s, access token expired: 503 with the platform's Retry-After; not called again before it ends",
    async (_name, fault) => {
      const { sim, app, store, cookie, sessionId, before, res } =
        await expiredRefreshFailing(fault);
      expect(Number(res.headers['retry-after'])).toBe(30);
      // Longer than maxRetryDelayMs: not retried by the client either.
      expect(sim.calls.refresh_token).toBe(1);

      sim.clearFaults();
      const held = await get(app, '/api/token', cookie);
      expect([held.status, held.body]).toEqual([503, { error: 'platform_unavailable' }]);
      expect(Number(held.headers['retry-after'])).toBeGreaterThanOrEqual(29);
      expect(sim.calls.refresh_token).toBe(1);
      expect(await storedRecord(store, sessionId)).toEqual(before);
    },
  );

  test.concurrent.each(ALL_FAULTS)(
    'platform %s, access token still valid: served with the current token, tokens kept',
    async (_name, fault) => {
      const { sim, app, store } = await setUp();
      const { cookie, sessionId } = await enter(sim, app);
      const before = await rewriteRecord(store, sessionId, expiringIn(20_000));
      sim.resetCalls();

      sim.injectFault(fault, { grant: 'refresh_token' });
      const res = await get(app, '/api/token', cookie);
      expect(res.status).toBe(200);
      // One refresh (with its retry): platformToken() in the handler does not try again.
      expect(sim.calls.refresh_token).toBeLessThanOrEqual(1 + CLIENT.refreshRetries);
      expect(res.body.accessToken).toBe(before.accessToken);
      expect(await storedRecord(store, sessionId)).toEqual(before);
    },
  );

  test.concurrent(
    'platform down (nothing listening): 503 platform_unavailable, tokens kept, served by a process that reaches it',
    async () => {
      // No cooldown: with one, every process would hold back its refreshes for that long.
      const { sim, app, unreachable, store } = await setUp({
        refresh: { failureCooldownSeconds: 0 },
      });
      const { cookie, sessionId } = await enter(sim, app);
      const before = await rewriteRecord(store, sessionId, expiringIn(-1000));
      const res = await get(unreachable, '/api/token', cookie);
      expect([res.status, res.body]).toEqual([503, { error: 'platform_unavailable' }]);
      expect(await storedRecord(store, sessionId)).toEqual(before);
      expect((await get(app, '/api/token', cookie)).status).toBe(200);
    },
  );

  test.concurrent(
    '429 with a Retry-After that fits maxRetryDelayMs: waited for, and the retry succeeds',
    async () => {
      const { sim, app, store } = await setUp();
      const { cookie, sessionId } = await enter(sim, app);
      const before = await rewriteRecord(store, sessionId, expiringIn(-1000));
      sim.resetCalls();
      sim.injectFault(
        { kind: 'status', status: 429, retryAfterSeconds: 1 },
        { grant: 'refresh_token', times: 1 },
      );
      const startedAt = Date.now();
      const res = await get(app, '/api/token', cookie);
      expect(res.status).toBe(200);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(950); // the platform asked for 1 s
      expect(sim.calls.refresh_token).toBe(2);
      expect((await storedRecord(store, sessionId))!.version).toBe(before.version + 1);
    },
  );
});
