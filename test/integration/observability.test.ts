// Operations: metrics through the OpenTelemetry API, the logger option, and login.ready().
import { engineOf } from '../../lib/core/derived-engine';
import request from 'supertest';
import { Redis } from 'ioredis';
import { RedisStore as SessionRedisStore } from 'connect-redis8';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { MemoryTokenStore, RedisTokenStore, type PlatformLogger } from 'express-platform-login';
import { createTestApp, TEST_REDIRECT_URI } from '../helpers/test-app';
import { enter, expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { bucketBounds, createTestMeter, sample, series, type TestMeter } from '../helpers/metrics';
import { startRedisServer } from '../helpers/redis-server';
import { hashSessionId } from '../../lib/core/hash';
import { valueOnce, waitUntil } from '../helpers/wait-until';
import { commandCount } from '../helpers/command-counts';
import { useSimulator } from '../helpers/bed';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';

let sim: PlatformSimulator;
let meter: TestMeter;
useSimulator((started) => (sim = started));
beforeEach(() => {
  meter = createTestMeter();
});
afterEach(() => meter.shutdown());

interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

function recordingLogger(): { logger: PlatformLogger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
    lines.push({ level, fields, message });
  return {
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    lines,
  };
}

describe('metrics', () => {
  test('token calls, refreshes, code replays and store calls are counted, with no secret in any label', async () => {
    const store = new MemoryTokenStore();
    const { app } = createTestApp({ sim, login: { store, meterProvider: meter.provider } });
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    const agent = request.agent(app);
    const entry = await agent.get(`/platform/callback?code=${code}`).expect(303);
    await request(app).get(`/platform/callback?code=${code}`).expect(400); // replay from another browser
    const sessionId = /connect\.sid=s%3A([^.]+)\./.exec(String(entry.headers['set-cookie']))![1]!;
    await rewriteRecord(store, sessionId, expiringIn(10_000));
    await agent.get('/api/me').expect(200);
    const record = await storedRecord(store, sessionId);

    const text = await meter.scrape();
    expect(
      sample(text, 'epl_token_endpoint_calls_total', {
        grant: 'authorization_code',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      sample(text, 'epl_token_endpoint_calls_total', { grant: 'refresh_token', outcome: 'ok' }),
    ).toBe(1);
    expect(sample(text, 'epl_refreshes_total', { renewed: 'same-token' })).toBe(1);
    expect(sample(text, 'epl_code_replays_total', { same_browser: 'false' })).toBe(1);
    expect(sample(text, 'epl_logins_total')).toBe(1);
    expect(
      sample(text, 'epl_store_duration_seconds_count', { operation: 'get', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(2);
    for (const secret of [
      code,
      record!.accessToken,
      record!.refreshToken,
      sessionId,
      'demo-secret',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  test('lock waits are counted when another process holds the refresh lock', async () => {
    const store = new MemoryTokenStore();
    const { app, login } = createTestApp({ sim, login: { store, meterProvider: meter.provider } });
    const { agent, sessionId } = await enter(app, sim);
    await rewriteRecord(store, sessionId, expiringIn(-1000));
    const owner = await engineOf(store).locks.acquire(hashSessionId(sessionId), 60_000); // "another process" refreshing
    let lockTried = false;
    login.on('storeCall', (call) => (lockTried ||= call.operation === 'acquireLock'));
    const waiting = agent.get('/api/me').then((res) => res); // supertest starts a request on then()
    // From the moment the request found the lock held (its wait began before), not from the moment
    // it was sent: on a loaded machine a request can take longer than this to arrive.
    await waitUntil(() => lockTried, 'the request to find the lock held');
    // Not a wait for a condition: the time the request waits, which the histogram must show.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await rewriteRecord(store, sessionId, expiringIn(3_600_000)); // …which then writes its result
    await engineOf(store).locks.release(hashSessionId(sessionId), owner!);
    expect((await waiting).status).toBe(200);
    const text = await meter.scrape();
    expect(sample(text, 'epl_lock_waits_total', { outcome: 'refreshed-elsewhere' })).toBe(1);
    expect(sample(text, 'epl_token_endpoint_calls_total', { grant: 'refresh_token' })).toBe(0);
    // In seconds: the wait lasted at least the 200 ms before the record was rewritten (the store
    // wakes the waiter on the rewrite itself; a timer may fire a millisecond early), and is within
    // the longest wait allowed (25 s with the client's defaults: its slowest refresh plus the 5 s
    // lock and 1 s), the top bucket.
    const labels = { outcome: 'refreshed-elsewhere' };
    const waited = sample(text, 'epl_lock_wait_duration_seconds_sum', labels);
    expect(waited).toBeGreaterThanOrEqual(0.199);
    expect(waited).toBeLessThan(25);
    expect(bucketBounds(text, 'epl_lock_wait_duration_seconds', labels)).toEqual([
      0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25,
    ]);
  });

  test('every counter series the package knows is listed at 0 before the first event', async () => {
    createTestApp({ sim, login: { meterProvider: meter.provider } });
    const text = await meter.scrape();
    const families = [
      'epl_token_endpoint_calls_total',
      'epl_refreshes_total',
      'epl_refresh_failures_total',
      'epl_lock_waits_total',
      'epl_code_replays_total',
      'epl_store_errors_total',
      'epl_entry_failures_total',
      'epl_records_unreadable_total',
      'epl_logins_total',
      'epl_logouts_total',
    ];
    for (const family of families) {
      expect(text).toContain(`# TYPE ${family} counter`);
      const lines = series(text, family);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toMatch(/ 0$/);
    }
    const known: Array<[string, Record<string, string>]> = [
      ['epl_token_endpoint_calls_total', { grant: 'refresh_token', outcome: 'ok' }],
      [
        'epl_token_endpoint_calls_total',
        { grant: 'refresh_token', outcome: 'ERR_PLATFORM_TIMEOUT' },
      ],
      [
        'epl_token_endpoint_calls_total',
        { grant: 'authorization_code', outcome: 'ERR_PLATFORM_INVALID_GRANT' },
      ],
      ['epl_refreshes_total', { renewed: 'new-token', background: 'true' }],
      ['epl_refresh_failures_total', { code: 'ERR_PLATFORM_REAUTH_REQUIRED', background: 'false' }],
      ['epl_refresh_failures_total', { code: 'ERR_PLATFORM_UNAVAILABLE', background: 'true' }],
      ['epl_lock_waits_total', { outcome: 'gave-up' }],
      ['epl_code_replays_total', { same_browser: 'false' }],
      ['epl_store_errors_total', { operation: 'get' }],
      ['epl_store_errors_total', { operation: 'session' }],
      ['epl_entry_failures_total', { code: 'ERR_PLATFORM_CODE_USED' }],
      ['epl_entry_failures_total', { code: 'ERR_PLATFORM_ENTRY_CONTEXT' }],
      ['epl_records_unreadable_total', { reason: 'decrypt' }],
    ];
    for (const [family, labels] of known) expect(series(text, family, labels)).toHaveLength(1);
    // Histograms have no series before their first observation (a zero would be one).
    expect(text).not.toContain('epl_store_duration_seconds_count');
  });

  test('refused entries are counted by code; requests refused elsewhere are not entries', async () => {
    const { app } = createTestApp({ sim, login: { meterProvider: meter.provider } });
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    await request(app).get(`/platform/callback?code=${code}`).expect(303);
    await request(app).get(`/platform/callback?code=${code}`).expect(400); // used
    await request(app).get('/platform/callback?code=made-up').expect(400); // refused by the platform
    await request(app).get('/platform/callback').expect(400); // no code
    await request(app).get('/api/me').expect(401); // not an entry
    const text = await meter.scrape();
    expect(sample(text, 'epl_entry_failures_total', { code: 'ERR_PLATFORM_CODE_USED' })).toBe(1);
    expect(sample(text, 'epl_entry_failures_total', { code: 'ERR_PLATFORM_CODE_REJECTED' })).toBe(
      1,
    );
    expect(sample(text, 'epl_entry_failures_total', { code: 'ERR_PLATFORM_INVALID_REQUEST' })).toBe(
      1,
    );
    const counted = series(text, 'epl_entry_failures_total').map((line) =>
      Number(line.slice(line.lastIndexOf(' ') + 1)),
    );
    expect(counted.reduce((sum, value) => sum + value, 0)).toBe(3); // the 401 is not among them
  });

  test("the session store's failures in front of the package are counted as store errors", async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url, { maxRetriesPerRequest: 1, commandTimeout: 300 });
    try {
      const { app } = createTestApp({
        sim,
        login: { meterProvider: meter.provider },
        sessionStore: new SessionRedisStore({ client: redis }),
      });
      const { agent } = await enter(app, sim);
      await agent.get('/api/me').expect(200);
      server.pause();
      for (let request = 0; request < 3; request += 1) await agent.get('/api/me').expect(503);
      server.resume();
      const text = await meter.scrape();
      expect(sample(text, 'epl_store_errors_total', { operation: 'session' })).toBe(3);
    } finally {
      server.resume();
      redis.disconnect();
      await server.stop();
    }
  });

  test.each([
    ['on', true],
    ['off', false],
  ])(
    'with the record cache %s, the store-get histogram counts the reads that reached Redis',
    async (_name, recordCache) => {
      const server = await startRedisServer();
      const redis = new Redis(server.url);
      const raw = new Redis(server.url);
      const store = new RedisTokenStore({ redis, recordCache });
      // Every record read runs one GET, as a command or inside the cache's read script; nothing
      // else a logged-in request with a fresh token sends does (the cache's heartbeat is PING/MGET).
      const reads = () => commandCount(raw, 'get');
      const counted = async () =>
        sample(await meter.scrape(), 'epl_store_duration_seconds_count', {
          operation: 'get',
          outcome: 'ok',
        });
      try {
        if (recordCache) await waitUntil(() => store.recordCacheActive, 'the record cache');
        const { app } = createTestApp({ sim, login: { store, meterProvider: meter.provider } });
        const { agent } = await enter(app, sim);
        const [readsBefore, countedBefore] = [await reads(), await counted()];
        for (let request = 0; request < 20; request += 1) await agent.get('/api/me').expect(200);
        const [readsSent, countedNow] = [
          (await reads()) - readsBefore,
          (await counted()) - countedBefore,
        ];

        expect(countedNow).toBe(readsSent);
        // Off, every request reads Redis. On, the first does and the rest are answered from memory
        // (a few more only if the cache lapsed meanwhile: then it reads again and fills again).
        if (recordCache) expect(readsSent).toBeLessThan(10);
        else expect(readsSent).toBe(20);
      } finally {
        await store.close();
        redis.disconnect();
        raw.disconnect();
        await server.stop();
      }
    },
  );

  test('durations are `…_seconds` histograms with buckets fitted to each: sub-millisecond for the store, up to the timeout for the token endpoint', async () => {
    const store = new MemoryTokenStore();
    const { app } = createTestApp({
      sim,
      login: { store, meterProvider: meter.provider, tokenClient: { timeoutMs: 8000 } },
    });
    const { agent, sessionId } = await enter(app, sim);
    await rewriteRecord(store, sessionId, expiringIn(10_000));
    await agent.get('/api/me').expect(200);
    const text = await meter.scrape();

    for (const family of ['epl_store_duration_seconds', 'epl_token_endpoint_duration_seconds']) {
      expect(text).toContain(`# TYPE ${family} histogram`);
      expect(text).toContain(`# UNIT ${family} s`);
    }
    expect(text).not.toMatch(/^epl_\w*duration_(bucket|count|sum)\{/m); // no unit-less names
    expect(
      bucketBounds(text, 'epl_store_duration_seconds', { operation: 'get', outcome: 'ok' }),
    ).toEqual([
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
      2.5,
    ]);
    const refresh = { grant: 'refresh_token', outcome: 'ok' };
    expect(bucketBounds(text, 'epl_token_endpoint_duration_seconds', refresh)).toEqual([
      0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 8,
    ]);
    // Seconds, not milliseconds: an attempt that succeeded took less than its 8 s deadline.
    expect(sample(text, 'epl_token_endpoint_duration_seconds_count', refresh)).toBe(1);
    expect(sample(text, 'epl_token_endpoint_duration_seconds_sum', refresh)).toBeLessThan(8);
    // The series recorded to is the one started at zero: one line per label set, not two.
    expect(
      series(text, 'epl_refreshes_total', { renewed: 'same-token', background: 'false' }),
    ).toEqual([expect.stringMatching(/ 1$/)]);
    expect(series(text, 'epl_logins_total')).toEqual([expect.stringMatching(/ 1$/)]);
  });
});

describe('the logger option', () => {
  test('structured lines for entry and refresh failure; the session only as a hash; the code redacted', async () => {
    const { logger, lines } = recordingLogger();
    const store = new MemoryTokenStore();
    const { app } = createTestApp({
      sim,
      login: { store, logger, tokenClient: { refreshRetries: 0 } },
    });
    const { agent, sessionId } = await enter(app, sim, 'player-ada');
    const login = lines.find((line) => line.fields.event === 'login');
    expect(login).toMatchObject({ level: 'info', fields: { openId: 'player-ada' } });
    expect(typeof login!.fields.sessionHash).toBe('string');
    // Each line's `event` is the event it comes from (docs/events.md).
    expect(lines.find((line) => line.fields.event === 'tokenAttempt')).toMatchObject({
      level: 'debug',
      fields: { grant: 'authorization_code', outcome: 'ok' },
    });

    await request(app)
      .get('/platform/callback?code=wrong%20code')
      .set('X-Request-Id', 'req-42')
      .expect(400);
    const refused = lines.find((line) => line.fields.code === 'ERR_PLATFORM_INVALID_REQUEST');
    expect(refused).toMatchObject({
      level: 'debug',
      message: 'request refused',
      fields: {
        event: 'requestFailed',
        part: 'entry',
        requestId: 'req-42',
        url: '/platform/callback?code=[redacted]',
      },
    });
    // Without an id from the app or the client, the line still has one of its own.
    await request(app).get('/api/me').expect(401);
    const loggedOut = lines.find((line) => line.fields.code === 'ERR_PLATFORM_LOGIN_REQUIRED');
    expect(loggedOut!.fields).toMatchObject({ event: 'requestFailed', part: 'request' });
    expect(loggedOut!.fields.requestId).toMatch(/^[0-9a-f-]{36}$/);

    await rewriteRecord(store, sessionId, expiringIn(-1000));
    sim.injectFault({ kind: 'status', status: 503 }, { grant: 'refresh_token' });
    await agent.get('/api/me').expect(503);
    expect(
      lines.some((line) => line.level === 'warn' && line.fields.event === 'refreshFailed'),
    ).toBe(true);

    const record = await storedRecord(store, sessionId);
    const everything = JSON.stringify(lines);
    for (const secret of [
      sessionId,
      record!.accessToken,
      record!.refreshToken,
      'demo-secret',
      'wrong code',
      'wrong%20code',
    ]) {
      expect(everything).not.toContain(secret);
    }
  });

  test('a logout line names the player, or says the session held no login', async () => {
    const { logger, lines } = recordingLogger();
    const { app } = createTestApp({ sim, login: { store: new MemoryTokenStore(), logger } });
    const { agent } = await enter(app, sim, 'player-ada');
    await agent.post('/logout').expect(204);
    // The same browser again: its session is gone, so there is no player to name.
    await agent.post('/logout').expect(204);
    expect(
      lines
        .filter((line) => line.fields.event === 'logout')
        .map((line) => [line.fields.openId, line.message]),
    ).toEqual([
      ['player-ada', 'player logged out'],
      [undefined, 'a session without a login was logged out'],
    ]);
  });

  test('a code presented again by another browser is a warning that does not say "used"', async () => {
    const { logger, lines } = recordingLogger();
    const { app } = createTestApp({ sim, login: { store: new MemoryTokenStore(), logger } });
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    await request(app).get(`/platform/callback?code=${code}`).expect(303);
    await request(app).get(`/platform/callback?code=${code}`).expect(400);
    const replay = lines.find((line) => line.fields.event === 'codeReplay');
    expect(replay).toMatchObject({
      level: 'warn',
      message: 'an entry code presented before came again from another browser',
      fields: { sameBrowser: false },
    });
  });

  test('a logger without the four methods is refused by name', () => {
    expect(() => createTestApp({ sim, login: { logger: console.log as never } })).toThrow(/logger/);
  });
});

describe('login.ready()', () => {
  test('ready with a store that answers; reports when the platform last answered', async () => {
    const { app, login } = createTestApp({ sim });
    const before = await login.ready();
    expect(before).toMatchObject({
      ready: true,
      store: { ok: true },
      platform: { lastAnsweredAt: null },
    });
    await enter(app, sim);
    const after = await login.ready();
    expect(after.platform.lastOutcome).toBe('ok');
    expect(Date.parse(after.platform.lastAnsweredAt!)).toBeGreaterThan(Date.now() - 10_000);
  });

  test('not ready while Redis is stalled, within the store deadline; ready again after', async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      const store = new RedisTokenStore({ redis, operationTimeoutMs: 500 });
      const { login } = createTestApp({ sim, login: { store } });
      expect((await login.ready()).ready).toBe(true);
      server.pause();
      const startedAt = Date.now();
      const stalled = await login.ready();
      expect(Date.now() - startedAt).toBeLessThan(2000 + LOAD_ALLOWANCE_MS);
      expect(stalled).toMatchObject({
        ready: false,
        store: { ok: false, error: 'ERR_PLATFORM_STORE_UNAVAILABLE' },
      });
      server.resume();
      const readyAgain = await valueOnce(
        async () => (await login.ready()).ready,
        (ready) => ready,
        5000,
      );
      expect(readyAgain).toBe(true);
    } finally {
      server.resume();
      redis.disconnect();
      await server.stop();
    }
  });
});
