// The platform's three answer styles over HTTP (docs/answer-styles.md), against the simulator
// speaking each and a real Redis: a used code is the entry's 400 page and a counted failed entry; a
// dead refresh token is one 401 `reauth_required` and the record gone; busy serves a usable token,
// then 503 with Retry-After, and the player is back with the platform; a rate limit holds entries
// with the platform's wait and counts against nobody; wrong credentials are 503
// `platform_misconfigured` and a warning; never a 500.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { RedisTokenStore, type PlatformLoginOptions } from 'express-platform-login';
import { createTestApp, TEST_REDIRECT_URI } from '../helpers/test-app';
import { enter, expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { waitUntil } from '../helpers/wait-until';
import { exchangeParams, postTokenForm } from '../helpers/simulator-requests';

const STYLES = ['oauth', 'errcode', 'envelope'] as const;
const JSON_ACCEPT = { Accept: 'application/json' };
const HTML_ACCEPT = { Accept: 'text/html' };
/** One quick retry, so that a transient fault costs little. */
const CLIENT = { timeoutMs: 2000, refreshRetries: 1, retryBaseDelayMs: 10, maxRetryDelayMs: 50 };

let redis: Redis;
beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL!);
});
afterAll(() => redis.disconnect());

const openStores: RedisTokenStore[] = [];
afterEach(() => Promise.all(openStores.splice(0).map((store) => store.close())));

describe.each(STYLES)("a platform answering in the '%s' style", (answerStyle) => {
  let sim: PlatformSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ answerStyle });
  });
  afterAll(() => sim.close());
  beforeEach(() => {
    sim.clearFaults();
    sim.resetCalls();
  });

  /** An app on a Redis token store of its own prefix; `warnings` collects the logger's warnings. */
  function start(extra: Partial<PlatformLoginOptions> = {}) {
    const prefix = `styles-${randomUUID().slice(0, 8)}:`;
    const store = new RedisTokenStore({ redis, prefix });
    openStores.push(store);
    const warnings: string[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (_fields: unknown, message: string) => warnings.push(message),
      error: (_fields: unknown, message: string) => warnings.push(message),
    };
    const { app, login } = createTestApp({
      sim,
      login: {
        answerStyle,
        store,
        logger,
        tokenClient: CLIENT,
        refresh: { failureCooldownSeconds: 0 },
        ...extra,
      },
    });
    return { app, login, store, prefix, warnings };
  }

  /** Keys of the failed-entry counters under `prefix`. */
  const counters = (prefix: string) => redis.keys(`${prefix}w:*`);

  /** Uses a code up at the platform itself, as another game server (or a replayed link) would. */
  async function usedCode(): Promise<string> {
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    const answer = await postTokenForm(
      sim,
      exchangeParams(code, { redirect_uri: TEST_REDIRECT_URI }),
    );
    expect(answer.status).toBe(200);
    return code;
  }

  test("a used code: the entry's 400 page, counted as a failed entry", async () => {
    const { app, prefix } = start();
    const code = await usedCode();
    const page = await request(app).get(`/platform/callback?code=${code}`).set(HTML_ACCEPT);
    expect(page.status).toBe(400);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const json = await request(app)
      .get(`/platform/callback?code=${await usedCode()}`)
      .set(JSON_ACCEPT);
    expect([json.status, json.body.error]).toEqual([400, 'code_rejected']);
    // The address's failed-entry count (and its marks) now exist in Redis.
    expect((await counters(prefix)).filter((key) => key.includes(':entry-failures:'))).not.toEqual(
      [],
    );
  });

  test('a dead refresh token: one 401 reauth_required, the record gone, never a 503', async () => {
    const { app, store } = start();
    const { agent, sessionId } = await enter(app, sim);
    await rewriteRecord(store, sessionId, expiringIn(-1000));
    sim.revokeRefreshTokens();
    const ended = await agent.get('/api/me').set(JSON_ACCEPT);
    expect([ended.status, ended.body.error]).toEqual([401, 'reauth_required']);
    expect(sim.calls.refresh_token).toBe(1);
    expect(await storedRecord(store, sessionId)).toBeUndefined();
    const after = await agent.get('/api/me').set(JSON_ACCEPT);
    expect(after.status).toBe(401);
    expect(sim.calls.refresh_token).toBe(1);
  });

  test('busy: a usable token is served, an expired one 503 with Retry-After, back with the platform', async () => {
    const { app, store } = start();
    const { agent, sessionId } = await enter(app, sim);
    const { accessToken } = await agent
      .get('/api/token')
      .expect(200)
      .then((r) => r.body);
    sim.injectFault({ kind: 'busy' }, { grant: 'refresh_token' });
    // Inside the refresh skew but not expired: the refresh fails, the current token is served.
    await rewriteRecord(store, sessionId, expiringIn(30_000));
    const served = await agent.get('/api/token').set(JSON_ACCEPT);
    expect([served.status, served.body.accessToken]).toEqual([200, accessToken]);
    await rewriteRecord(store, sessionId, expiringIn(-1000));
    const down = await agent.get('/api/me').set(JSON_ACCEPT);
    expect([down.status, down.body.error]).toEqual([503, 'platform_unavailable']);
    expect(Number(down.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await storedRecord(store, sessionId)).toBeDefined();
    sim.clearFaults();
    const back = await agent.get('/api/me').set(JSON_ACCEPT);
    expect([back.status, back.body.openId]).toEqual([200, 'player-ada']);
  });

  test("a rate limit holds entries with the platform's wait, counted against nobody", async () => {
    const { app, login, prefix } = start();
    const holds: number[] = [];
    login.on('exchangeHold', (event) => event.held && holds.push(event.retryAfterSeconds));
    sim.injectFault({ kind: 'throttle', retryAfterSeconds: 30 }, { grant: 'authorization_code' });
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    const held = await request(app).get(`/platform/callback?code=${code}`).set(JSON_ACCEPT);
    expect([held.status, held.body.error]).toEqual([503, 'platform_busy']);
    expect(Number(held.headers['retry-after'])).toBe(30);
    expect(holds).toEqual([30]);
    expect(await counters(prefix)).toEqual([]);
  });

  test("a rate limit on a refresh: the platform's wait, the login kept", async () => {
    const { app, store } = start();
    const { agent, sessionId } = await enter(app, sim);
    sim.injectFault({ kind: 'throttle', retryAfterSeconds: 30 }, { grant: 'refresh_token' });
    await rewriteRecord(store, sessionId, expiringIn(-1000));
    const held = await agent.get('/api/me').set(JSON_ACCEPT);
    expect([held.status, held.body.error]).toEqual([503, 'platform_unavailable']);
    expect(Number(held.headers['retry-after'])).toBe(30);
    expect(await storedRecord(store, sessionId)).toBeDefined();
  });

  test('wrong client credentials: 503 platform_misconfigured and a warning naming them', async () => {
    const { app, warnings } = start({ clientSecret: 'not-the-secret' });
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    const answer = await request(app).get(`/platform/callback?code=${code}`).set(JSON_ACCEPT);
    expect([answer.status, answer.body.error]).toEqual([503, 'platform_misconfigured']);
    expect(warnings.join('\n')).toContain('clientSecret');
  });
});

describe.each(['errcode', 'envelope'] as const)(
  "'%s': what RFC 6749 never shows",
  (answerStyle) => {
    let sim: PlatformSimulator;
    beforeAll(async () => {
      // Long enough for an entry and a request within it on a loaded machine.
      sim = await startSimulator({ answerStyle, refreshTokenLifetimeSeconds: 8 });
    });
    afterAll(() => sim.close());

    test('a rate limit in a 200 with no Retry-After holds for the default wait', async () => {
      const prefix = `styles-${randomUUID().slice(0, 8)}:`;
      const store = new RedisTokenStore({ redis, prefix });
      openStores.push(store);
      const { app } = createTestApp({ sim, login: { answerStyle, store } });
      sim.injectFault({ kind: 'throttle', retryAfterSeconds: 0 }, { grant: 'authorization_code' });
      const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
      const held = await request(app).get(`/platform/callback?code=${code}`).set(JSON_ACCEPT);
      sim.clearFaults();
      expect([held.status, held.body.error]).toEqual([503, 'platform_busy']);
      expect(Number(held.headers['retry-after'])).toBe(10);
      expect(await redis.keys(`${prefix}w:*`)).toEqual([]);
    });

    if (answerStyle === 'envelope') {
      test("refresh_expires_in: the login ends at the refresh token's end, with loginExpired", async () => {
        const prefix = `styles-${randomUUID().slice(0, 8)}:`;
        const store = new RedisTokenStore({ redis, prefix });
        openStores.push(store);
        const { app, login } = createTestApp({ sim, login: { answerStyle, store } });
        const expired: string[] = [];
        login.on('loginExpired', (event) => expired.push(event.openId));
        const { agent, sessionId } = await enter(app, sim);
        const record = await storedRecord(store, sessionId);
        // The simulator's refresh token lives 8 s: the record ends with it, not in 90 days.
        expect(record!.refreshExpiresAt - Date.now()).toBeLessThanOrEqual(8000);
        await agent.get('/api/me').expect(200);
        await waitUntil(
          async () => (await storedRecord(store, sessionId)) === undefined,
          'the record to expire',
        );
        const ended = await agent.get('/api/me').set(JSON_ACCEPT);
        expect([ended.status, ended.body.error]).toEqual([401, 'login_required']);
        expect(expired).toEqual(['player-ada']);
        expect(sim.calls.refresh_token).toBe(0);
      });
    }
  },
);
