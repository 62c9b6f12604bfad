// The middleware in front of the game's routes, against the real simulator. Every row of the
// failure answers of the README's "Errors" section that concern an authenticated request is here.
import { engineOf } from '../../lib/core/derived-engine';
import express, { type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import session from 'express-session';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import {
  MemoryTokenStore,
  platformLogin,
  SetupError,
  type PlatformLoginEvents,
} from 'express-platform-login';
import {
  createTestApp,
  expectLoginRequired,
  loginOptions,
  SESSION_SECRET,
  TEST_REDIRECT_URI,
} from '../helpers/test-app';
import { enter, expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { waitUntil } from '../helpers/wait-until';
import { sessionCookieFrom, sessionIdFrom } from '../helpers/session-cookie';
import { hashSessionId } from '../../lib/core/hash';
import { useSimulator } from '../helpers/bed';

let sim: PlatformSimulator;
useSimulator((started) => (sim = started));
beforeEach(() => sim.setRotation(false));

function setUp(login: Parameters<typeof createTestApp>[0]['login'] = {}) {
  const store = new MemoryTokenStore();
  const built = createTestApp({ sim, login: { store, ...login } });
  return { ...built, store };
}

const SECOND = 1000;

/** The platform down, silent, or answering `garbage`, as a test.each table. */
const platformFaults = (garbage: 'malformed-json' | 'html') =>
  [
    ['down (503)', { kind: 'status', status: 503 }],
    ['slow (no answer)', { kind: 'hang' }],
    ['answering garbage', { kind: garbage }],
  ] as const;
const HOUR = 3600 * SECOND;

describe('no login', () => {
  test('401 login_required without a session', async () => {
    const { app } = setUp();
    await expectLoginRequired(app, '/api/me');
  });

  test('optional mode goes on without a player', async () => {
    const { app } = setUp();
    const res = await request(app).get('/optional').expect(200);
    expect(res.body).toEqual({ player: null });
  });

  test('optional mode: a login the platform ended mid-request goes on as a visitor', async () => {
    const { app, store } = setUp();
    const { agent, sessionId } = await enter(app, sim);
    await rewriteRecord(store, sessionId, expiringIn(10 * SECOND));
    sim.revokeRefreshTokens();
    const res = await agent.get('/optional').expect(200);
    expect(res.body).toEqual({ player: null });
    expect(await storedRecord(store, sessionId)).toBeUndefined();
  });

  test("with handleErrors: false the app's error middleware gets the LoginRequiredError", async () => {
    // handleErrors: false passes the refusal to the app, as a studio with its own error pages has it.
    const login = platformLogin(
      loginOptions(sim, { store: new MemoryTokenStore(), handleErrors: false }),
    );
    const app = express();
    app.use(session({ secret: SESSION_SECRET, resave: false, saveUninitialized: false }));
    app.use('/api', login.middleware());
    app.get('/api/me', (req, res) => res.json(req.platformUser));
    app.use(
      (
        err: Error & { code?: string; status?: number },
        req: Request,
        res: Response,
        _next: NextFunction,
      ) => {
        res.status(err.status ?? 500).json({ code: err.code, name: err.name });
      },
    );
    const res = await request(app).get('/api/me').set('Accept', 'application/json');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 'ERR_PLATFORM_LOGIN_REQUIRED', name: 'LoginRequiredError' });
  });

  test('a record gone from the store is 401 login_required', async () => {
    const { app, store } = setUp();
    const { agent, sessionId } = await enter(app, sim);
    await engineOf(store).records.delete(hashSessionId(sessionId));
    const res = await agent.get('/api/me').set('Accept', 'application/json');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'login_required' });
  });
});

describe('a fresh token', () => {
  test('is served without calling the platform', async () => {
    const { app } = setUp();
    const { agent } = await enter(app, sim);
    sim.resetCalls();
    await agent.get('/api/me').expect(200);
    await agent.get('/api/me').expect(200);
    expect(sim.calls.refresh_token).toBe(0);
  });

  test('platformFetch calls the open API with the player token', async () => {
    const { app } = setUp();
    const { agent } = await enter(app, sim, 'player-ada');
    const res = await agent.get('/api/profile').expect(200);
    expect(res.body.open_id).toBe('player-ada');
    expect(sim.calls.userinfo).toBe(1);
  });

  test('platformFetch can present the token as a query parameter', async () => {
    const { app } = setUp({ api: { tokenPlacement: 'query' } });
    const { agent } = await enter(app, sim, 'player-ada');
    const res = await agent.get('/api/profile').expect(200);
    expect(res.body.open_id).toBe('player-ada');
  });
});

describe('refresh before the handler', () => {
  test('less than the skew left: refreshed once, before the handler runs', async () => {
    const { app, store, login } = setUp();
    const refreshes: PlatformLoginEvents['refresh'][0][] = [];
    login.on('refresh', (event) => refreshes.push(event));
    const { agent, sessionId } = await enter(app, sim);
    const before = await rewriteRecord(store, sessionId, expiringIn(30 * SECOND));
    sim.resetCalls();
    const res = await agent.get('/api/token').expect(200);
    expect(sim.calls.refresh_token).toBe(1);
    const after = await storedRecord(store, sessionId);
    expect(after!.version).toBe(before.version + 1);
    expect(after!.accessExpiresAt).toBeGreaterThan(Date.now() + HOUR);
    // The platform renews an unexpired token in place: same value, new expiry.
    expect(res.body.accessToken).toBe(before.accessToken);
    expect(refreshes).toEqual([
      expect.objectContaining({ renewed: 'same-token', background: false }),
    ]);
  });

  test('an expired token is replaced by a new one', async () => {
    const { app, store } = setUp();
    const { agent, sessionId } = await enter(app, sim);
    const before = await rewriteRecord(store, sessionId, expiringIn(-SECOND));
    sim.advanceClock(3 * 3600); // the platform agrees the token has expired
    const res = await agent.get('/api/token').expect(200);
    expect(res.body.accessToken).not.toBe(before.accessToken);
    expect((await storedRecord(store, sessionId))!.accessToken).toBe(res.body.accessToken);
  });

  test('token client options given as undefined keep their defaults (refresh still works)', async () => {
    const { app, store } = setUp({
      tokenClient: { timeoutMs: undefined, refreshRetries: undefined, maxRetryDelayMs: undefined },
    });
    const { agent, sessionId } = await enter(app, sim);
    const before = await rewriteRecord(store, sessionId, expiringIn(10 * SECOND));
    await agent.get('/api/me').expect(200);
    expect((await storedRecord(store, sessionId))!.version).toBe(before.version + 1);
  });

  test('the refresh lock lives 5 s, renewed by its holder', async () => {
    const lockTtls: number[] = [];
    const store = new MemoryTokenStore();
    const acquire = engineOf(store).locks.acquire;
    engineOf(store).locks.acquire = (sessionKey, ttlMs) => {
      lockTtls.push(ttlMs);
      return acquire(sessionKey, ttlMs);
    };
    const tokenClient = { timeoutMs: 1500, refreshRetries: 1, maxRetryDelayMs: 700 };
    const { app, login } = setUp({ store, tokenClient });
    const { agent, sessionId } = await enter(app, sim);
    await rewriteRecord(store, sessionId, expiringIn(10 * SECOND));
    await agent.get('/api/me').expect(200);
    // Two attempts timing out, one wait before the retry.
    expect(login.client.longestRefreshMs).toBe(1500 * 2 + 700);
    expect(lockTtls).toEqual([5000]);
  });

  test('a store lacking a part (or a method of one) is refused at creation, naming it', () => {
    const full = new MemoryTokenStore();
    const create = (store: object) => () =>
      platformLogin({
        authUrl: sim.url,
        clientId: 'c',
        clientSecret: 's',
        redirectUri: 'https://game.example/cb',
        // Entries checked: the one store that is accepted builds no unchecked-entry warning.
        platformOrigins: [new URL(sim.url).origin],
        store: store as never,
      });
    const methods = {
      get: (key: string) => full.get(key),
      put: full.put.bind(full),
      delete: full.delete.bind(full),
      renew: full.renew.bind(full),
    };
    const { renew: _renew, ...withoutRenew } = methods;
    expect(create(withoutRenew)).toThrow(SetupError);
    expect(create(withoutRenew)).toThrow(/`store` is missing `renew\(\)`/);
    expect(create({ ...methods, watch: 'yes' })).toThrow(/`watch` is not a function/);
    // The 0.1 shape (records, locks, counters parts) is refused, naming what is missing.
    expect(create(engineOf(full))).toThrow(/missing `get\(\)`/);
    expect(create(methods)).not.toThrow();
  });

  test('the skew is configurable', async () => {
    const { app, store } = setUp({ refresh: { skewSeconds: 10 } });
    const { agent, sessionId } = await enter(app, sim);
    await rewriteRecord(store, sessionId, () => ({
      accessExpiresAt: Date.now() + 30 * SECOND,
      obtainedAt: Date.now(),
    }));
    sim.resetCalls();
    await agent.get('/api/me').expect(200);
    expect(sim.calls.refresh_token).toBe(0);
  });

  test('past the refresh-ahead point the request goes on and the refresh runs in the background', async () => {
    const { app, store, login } = setUp();
    const { agent, sessionId } = await enter(app, sim);
    const before = await rewriteRecord(store, sessionId, () => ({
      obtainedAt: Date.now() - 2 * HOUR,
      accessExpiresAt: Date.now() + HOUR,
    }));
    sim.injectFault({ kind: 'latency', ms: 3000 }, { grant: 'refresh_token' });
    let answered = false;
    const refreshed = new Promise<PlatformLoginEvents['refresh'][0]>((resolve) =>
      login.once('refresh', (event) => {
        answered = true;
        resolve(event);
      }),
    );
    await agent.get('/api/me').expect(200);
    // Served with the current record, before the slow platform answered.
    expect((await storedRecord(store, sessionId))!.version).toBe(before.version);
    expect([answered, sim.calls.refresh_token]).toEqual([false, 1]);
    expect((await refreshed).background).toBe(true);
    expect((await storedRecord(store, sessionId))!.version).toBe(before.version + 1);
    expect(sim.calls.refresh_token).toBe(1);
  });
});

describe('the failure table', () => {
  const json = { Accept: 'application/json' };

  test('refresh token rejected (invalid_grant): record deleted, 401 reauth_required', async () => {
    const { app, store } = setUp();
    const { agent, sessionId } = await enter(app, sim);
    await rewriteRecord(store, sessionId, expiringIn(10 * SECOND));
    sim.revokeRefreshTokens();
    const res = await agent.get('/api/me').set(json);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'reauth_required' });
    expect(await storedRecord(store, sessionId)).toBeUndefined();
    expect((await agent.get('/api/me').set(json)).body).toEqual({ error: 'login_required' });
  });

  test.each(platformFaults('malformed-json'))(
    'platform %s with a still-valid token: served with the current token, kept',
    async (_name, fault) => {
      const { app, store, login } = setUp({ tokenClient: { timeoutMs: 1500, refreshRetries: 1 } });
      const failures: string[] = [];
      login.on('refreshFailed', (event) => failures.push(event.code));
      const { agent, sessionId } = await enter(app, sim);
      const before = await rewriteRecord(store, sessionId, expiringIn(20 * SECOND));
      sim.injectFault(fault, { grant: 'refresh_token' });
      const res = await agent.get('/api/token').expect(200);
      expect(res.body.accessToken).toBe(before.accessToken);
      // A platform that does not answer may outlast the request: its failure is told after.
      await waitUntil(() => failures.length > 0, 'the refresh to fail');
      expect(await storedRecord(store, sessionId)).toEqual(before);
      expect(failures).toHaveLength(1);
    },
  );

  test.each(platformFaults('html'))(
    'platform %s with an expired token: 503 platform_unavailable with Retry-After, tokens kept',
    async (_name, fault) => {
      const { app, store } = setUp({
        tokenClient: { timeoutMs: 1500, refreshRetries: 1 },
        refresh: { failureCooldownSeconds: 0 },
      });
      const { agent, sessionId } = await enter(app, sim);
      const before = await rewriteRecord(store, sessionId, expiringIn(-SECOND));
      sim.injectFault(fault, { grant: 'refresh_token' });
      const res = await agent.get('/api/me').set(json);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'platform_unavailable' });
      expect(res.headers['retry-after']).toBe('5');
      expect(await storedRecord(store, sessionId)).toEqual(before);
      // Once the platform is back, the same login works again.
      sim.clearFaults();
      await agent.get('/api/me').expect(200);
    },
  );

  test('during an outage a login is tried once per cooldown, not once per request', async () => {
    const { app, store } = setUp({
      tokenClient: { refreshRetries: 0 },
      refresh: { failureCooldownSeconds: 60 },
    });
    const { agent, sessionId } = await enter(app, sim);
    await rewriteRecord(store, sessionId, expiringIn(-SECOND));
    sim.injectFault({ kind: 'status', status: 503 }, { grant: 'refresh_token' });
    sim.resetCalls();
    for (let i = 0; i < 5; i += 1) {
      const res = await agent.get('/api/me').set(json);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'platform_unavailable' });
    }
    expect(sim.calls.refresh_token).toBe(1);
  });

  test('requests another process kept waiting do not repeat a refresh that just failed there', async () => {
    // Two app instances ("processes") sharing the session store and the token store.
    const store = new MemoryTokenStore();
    const sessionStore = new session.MemoryStore();
    const options = { store, tokenClient: { refreshRetries: 0, timeoutMs: 1500 } };
    const one = createTestApp({ sim, sessionStore, login: options });
    const two = createTestApp({ sim, sessionStore, login: options });
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    const entry = await request(one.app).get(`/platform/callback?code=${code}`).expect(303);
    const cookie = sessionCookieFrom(entry);
    const sessionId = sessionIdFrom(entry);
    const before = await rewriteRecord(store, sessionId, expiringIn(-SECOND));
    sim.injectFault({ kind: 'hang' }, { grant: 'refresh_token' });
    sim.resetCalls();
    const ask = (app: typeof one.app) =>
      request(app).get('/api/me').set(json).set('Cookie', cookie);
    const answers = await Promise.all([ask(one.app), ask(two.app)]);
    expect(answers.map((r) => [r.status, r.body])).toEqual([
      [503, { error: 'platform_unavailable' }],
      [503, { error: 'platform_unavailable' }],
    ]);
    expect(sim.calls.refresh_token).toBe(1);
    expect(await storedRecord(store, sessionId)).toEqual(before);
  });

  test('invalid_client: 503 platform_misconfigured, tokens kept', async () => {
    const { app, store } = setUp();
    const { agent, sessionId } = await enter(app, sim);
    const before = await rewriteRecord(store, sessionId, expiringIn(-SECOND));
    sim.injectFault({ kind: 'status', status: 401 }, { grant: 'refresh_token' });
    sim.clearFaults();
    sim.injectFault(
      { kind: 'error-body-200', error: 'invalid_client' },
      { grant: 'refresh_token' },
    );
    const res = await agent.get('/api/me').set(json);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'platform_misconfigured' });
    expect(await storedRecord(store, sessionId)).toEqual(before);
  });

  test('a refresh that returns another open_id is refused: record deleted, 401 reauth_required', async () => {
    const { app, store } = setUp();
    const { agent, sessionId } = await enter(app, sim, 'player-ada');
    await rewriteRecord(store, sessionId, expiringIn(10 * SECOND));
    sim.injectFault(
      { kind: 'field', field: 'open_id', value: 'player-bo' },
      { grant: 'refresh_token' },
    );
    const res = await agent.get('/api/me').set(json);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'reauth_required' });
    expect(await storedRecord(store, sessionId)).toBeUndefined();
  });

  test('a response without a refresh_token keeps the old refresh token', async () => {
    const { app, store } = setUp();
    const { agent, sessionId } = await enter(app, sim);
    const before = await rewriteRecord(store, sessionId, expiringIn(10 * SECOND));
    sim.injectFault(
      { kind: 'field', field: 'refresh_token', value: undefined, remove: true },
      { grant: 'refresh_token' },
    );
    await agent.get('/api/me').expect(200);
    const after = await storedRecord(store, sessionId);
    expect(after!.version).toBe(before.version + 1);
    expect(after!.refreshToken).toBe(before.refreshToken);
  });
});

describe('one refresh for many requests', () => {
  test('100 concurrent requests on one session: exactly 1 refresh reaches the platform, all succeed', async () => {
    const { app, store } = setUp();
    const { agent, sessionId } = await enter(app, sim);
    await rewriteRecord(store, sessionId, expiringIn(-SECOND));
    sim.advanceClock(3 * 3600);
    sim.injectFault({ kind: 'latency', ms: 100 }, { grant: 'refresh_token' });
    sim.resetCalls();
    const answers = await Promise.all(Array.from({ length: 100 }, () => agent.get('/api/token')));
    expect(answers.map((r) => r.status)).toEqual(Array(100).fill(200));
    expect(sim.calls.refresh_token).toBe(1);
    const tokens = new Set(answers.map((r) => r.body.accessToken));
    expect(tokens.size).toBe(1);
  });
});

describe('req.platformFetch', () => {
  test('a 401 from the open API forces one refresh and one retry', async () => {
    const { app, store } = setUp();
    const { agent, sessionId } = await enter(app, sim);
    const before = await storedRecord(store, sessionId);
    sim.advanceClock(3 * 3600); // the platform ends the token while the record still looks fresh
    sim.resetCalls();
    const res = await agent.get('/api/profile').expect(200);
    expect(res.body.open_id).toBe('player-ada');
    expect(sim.calls.refresh_token).toBe(1);
    expect(sim.calls.userinfo).toBe(2);
    expect((await storedRecord(store, sessionId))!.accessToken).not.toBe(before!.accessToken);
  });
});

describe('the express-session write-back race', () => {
  test('a slow request that saves its session after a refresh does not bring the old token back', async () => {
    const { app, store } = setUp();
    const { agent, sessionId } = await enter(app, sim);
    const old = await rewriteRecord(store, sessionId, () => ({
      accessExpiresAt: Date.now() + HOUR,
      obtainedAt: Date.now(),
    }));
    sim.advanceClock(3 * 3600);
    const reads = jest.spyOn(engineOf(store).records, 'get');
    const slow = agent.get('/api/slow?ms=600').then((res) => res); // then() starts the request now
    // Let the slow request load the record first, then refresh through a second request.
    await waitUntil(() => reads.mock.calls.length > 0, 'the slow request to read the record');
    await rewriteRecord(store, sessionId, expiringIn(-SECOND));
    const refreshed = await agent.get('/api/token').expect(200);
    expect(refreshed.body.accessToken).not.toBe(old.accessToken);
    const slowAnswer = await slow;
    expect(slowAnswer.status).toBe(200);
    const later = await agent.get('/api/token').expect(200);
    expect(later.body.accessToken).toBe(refreshed.body.accessToken);
    expect((await storedRecord(store, sessionId))!.accessToken).toBe(refreshed.body.accessToken);
  });
});

describe('logout', () => {
  test('deletes the record, destroys the session, clears the cookie', async () => {
    const { app, store, login } = setUp();
    const logouts: string[] = [];
    login.on('logout', (event) => logouts.push(event.openId ?? ''));
    const { agent, sessionId } = await enter(app, sim, 'player-ada');
    const res = await agent.post('/logout');
    expect(res.status).toBe(204);
    expect(String(res.headers['set-cookie'])).toMatch(/connect\.sid=;.*Expires=Thu, 01 Jan 1970/);
    expect(await storedRecord(store, sessionId)).toBeUndefined();
    await agent.get('/api/me').expect(401);
    expect(logouts).toEqual(['player-ada']);
  });
});
