// The entry: GET /platform/callback?code=… against the real simulator.
import request from 'supertest';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { MemoryTokenStore, type PlatformLoginEvents } from 'express-platform-login';
import { createTestApp, TEST_REDIRECT_URI, loginOptions } from '../helpers/test-app';
import { sessionCookieFrom, sessionIdFrom } from '../helpers/session-cookie';
import { platformLogin } from 'express-platform-login';
import { storedRecord } from '../helpers/records';
import { useSimulator } from '../helpers/bed';

let sim: PlatformSimulator;
useSimulator((started) => (sim = started));

const code = (openId?: string): string =>
  sim.issueCode({ redirectUri: TEST_REDIRECT_URI, ...(openId ? { openId } : {}) });

describe('a valid entry', () => {
  test('exchanges the code once, starts a session and lands on the success path', async () => {
    const store = new MemoryTokenStore();
    const { app } = createTestApp({ sim, login: { store } });
    const agent = request.agent(app);
    const res = await agent.get(
      `/platform/callback?code=${encodeURIComponent(code('player-ada'))}`,
    );
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(sim.calls.authorization_code).toBe(1);

    const record = await storedRecord(store, sessionIdFrom(res));
    expect(record).toMatchObject({ openId: 'player-ada', version: 1 });
    expect(record!.accessToken.length).toBeGreaterThan(0);

    const me = await agent.get('/api/me').expect(200);
    expect(me.body).toMatchObject({ openId: 'player-ada' });
    expect(Array.isArray(me.body.scope)).toBe(true);
    expect(JSON.stringify(me.body)).not.toContain(record!.accessToken);
  });

  test('lands on the configured successRedirect', async () => {
    const { app } = createTestApp({ sim, login: { successRedirect: '/game?from=platform' } });
    const res = await request(app).get(`/platform/callback?code=${code()}`);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/game?from=platform');
  });

  test('starts a new session id, so an id planted before the entry is worthless', async () => {
    const { app } = createTestApp({ sim });
    const agent = request.agent(app);
    const first = await agent.get(`/platform/callback?code=${code('player-ada')}`).expect(303);
    const second = await agent.get(`/platform/callback?code=${code('player-ada')}`).expect(303);
    expect(sessionIdFrom(second)).not.toBe(sessionIdFrom(first));
    // The old cookie no longer logs anybody in.
    await request(app).get('/api/me').set('Cookie', sessionCookieFrom(first)).expect(401);
    await agent.get('/api/me').expect(200);
  });

  test('emits login with the openId and a session hash, never a token', async () => {
    const { app, login } = createTestApp({ sim });
    const seen: PlatformLoginEvents['login'][0][] = [];
    login.on('login', (event) => seen.push(event));
    const res = await request(app)
      .get(`/platform/callback?code=${code('player-ada')}`)
      .expect(303);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.openId).toBe('player-ada');
    expect(seen[0]!.sessionHash).not.toContain(sessionIdFrom(res));
  });
});

describe('methods other than GET', () => {
  test.each(['HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'])(
    '%s answers 405 and redeems nothing',
    async (method) => {
      const { app } = createTestApp({ sim });
      const entry = code();
      const res = await request(app)[method.toLowerCase() as 'post'](
        `/platform/callback?code=${entry}`,
      );
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET');
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(sim.calls.authorization_code).toBe(0);
      // The code is still good for the real entry.
      await request(app).get(`/platform/callback?code=${entry}`).expect(303);
    },
  );
});

describe('code validation', () => {
  test.each([
    ['no code', ''],
    ['an empty code', '?code='],
    ['two codes', '?code=abc&code=def'],
    ['a code with a space', '?code=ab%20cd'],
    ['a code with a control character', '?code=ab%00cd'],
    ['a non-ASCII code', '?code=%C3%A9t%C3%A9'],
    ['a code of 513 characters', `?code=${'a'.repeat(513)}`],
    ['a bracketed code (qs object syntax)', '?code[a]=b'],
  ])('%s is 400 invalid_request without a platform call', async (_name, query) => {
    const { app } = createTestApp({ sim });
    const res = await request(app)
      .get(`/platform/callback${query}`)
      .set('Accept', 'application/json');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request' });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(sim.calls.authorization_code).toBe(0);
  });

  test('an `error` parameter answers with the error code only', async () => {
    const { app } = createTestApp({ sim });
    const res = await request(app)
      .get('/platform/callback?error=access_denied&error_description=%3Cscript%3E')
      .set('Accept', 'application/json');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'access_denied' });
    expect(sim.calls.authorization_code).toBe(0);
  });

  test('browsers get a short HTML page, API clients JSON', async () => {
    const { app } = createTestApp({ sim });
    const html = await request(app)
      .get('/platform/callback')
      .set('Accept', 'text/html,application/xhtml+xml');
    expect(html.status).toBe(400);
    expect(html.headers['content-type']).toMatch(/text\/html/);
    expect(html.text).toContain('Enter the game again');
    const json = await request(app).get('/platform/callback').set('Accept', 'application/json');
    expect(json.headers['content-type']).toMatch(/application\/json/);
  });

  test.each([
    ['access_denied', 403, 'You did not allow the game'],
    ['server_error', 502, 'The platform could not complete this entry'],
    ['temporarily_unavailable', 503, 'The platform is busy right now'],
  ])(
    'a player sent back with error=%s reads what happened on the page',
    async (error, status, said) => {
      const { app } = createTestApp({ sim });
      const html = await request(app)
        .get(`/platform/callback?error=${error}`)
        .set('Accept', 'text/html,application/xhtml+xml');
      expect(html.status).toBe(status);
      expect(html.text).toContain(said);
    },
  );
});

describe('codes are redeemed once', () => {
  test('the same browser repeating its entry lands again without a second exchange', async () => {
    const { app, login } = createTestApp({ sim });
    const replays: boolean[] = [];
    login.on('codeReplay', (event) => replays.push(event.sameBrowser));
    const agent = request.agent(app);
    const entry = code();
    await agent.get(`/platform/callback?code=${entry}`).expect(303);
    const again = await agent.get(`/platform/callback?code=${entry}`);
    expect(again.status).toBe(303);
    expect(sim.calls.authorization_code).toBe(1);
    expect(replays).toEqual([true]);
    await agent.get('/api/me').expect(200);
  });

  test('another browser presenting a used code is refused without a platform call', async () => {
    const { app, login } = createTestApp({ sim });
    const replays: boolean[] = [];
    login.on('codeReplay', (event) => replays.push(event.sameBrowser));
    const entry = code();
    await request(app).get(`/platform/callback?code=${entry}`).expect(303);
    const stolen = await request(app)
      .get(`/platform/callback?code=${entry}`)
      .set('Accept', 'application/json');
    expect(stolen.status).toBe(400);
    expect(stolen.body).toEqual({ error: 'code_already_used' });
    expect(stolen.headers['set-cookie']).toBeUndefined();
    expect(sim.calls.authorization_code).toBe(1);
    expect(replays).toEqual([false]);
  });

  test('two processes sharing a store never send one code twice', async () => {
    const store = new MemoryTokenStore();
    const one = createTestApp({ sim, login: { store } });
    const two = createTestApp({ sim, login: { store } });
    const entry = code();
    const answers = await Promise.all([
      request(one.app).get(`/platform/callback?code=${entry}`),
      request(two.app).get(`/platform/callback?code=${entry}`),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([303, 400]);
    expect(sim.calls.authorization_code).toBe(1);
  });
});

describe('a new player in a browser that holds another player', () => {
  test('replaces the old session completely: its tokens are deleted', async () => {
    const store = new MemoryTokenStore();
    const { app, login } = createTestApp({ sim, login: { store } });
    const switches: PlatformLoginEvents['identitySwitch'][0][] = [];
    login.on('identitySwitch', (event) => switches.push(event));
    const agent = request.agent(app);
    const ada = await agent.get(`/platform/callback?code=${code('player-ada')}`).expect(303);
    const adaSession = sessionIdFrom(ada);
    expect(await storedRecord(store, adaSession)).toBeDefined();

    const other = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-bo' });
    const bo = await agent.get(`/platform/callback?code=${other}`).expect(303);
    expect(await storedRecord(store, adaSession)).toBeUndefined();
    expect((await storedRecord(store, sessionIdFrom(bo)))?.openId).toBe('player-bo');
    expect((await agent.get('/api/me').expect(200)).body.openId).toBe('player-bo');
    expect(switches).toEqual([
      expect.objectContaining({ previousOpenId: 'player-ada', openId: 'player-bo' }),
    ]);
  });
});

describe('a broken platform at the exchange', () => {
  const json = (r: request.Test): request.Test => r.set('Accept', 'application/json');

  test('a 5xx is 502 platform_error, not retried, nothing stored', async () => {
    const { app } = createTestApp({ sim });
    sim.injectFault({ kind: 'status', status: 503 });
    const res = await json(request(app).get(`/platform/callback?code=${code()}`));
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: 'platform_error' });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(sim.calls.authorization_code).toBe(1);
  });

  test('garbage is 502 platform_error', async () => {
    const { app } = createTestApp({ sim });
    sim.injectFault({ kind: 'html' });
    const res = await json(request(app).get(`/platform/callback?code=${code()}`));
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: 'platform_error' });
  });

  test('a platform that never answers is 504 platform_timeout', async () => {
    const { app } = createTestApp({ sim, login: { tokenClient: { timeoutMs: 300 } } });
    sim.injectFault({ kind: 'hang' });
    const res = await json(request(app).get(`/platform/callback?code=${code()}`));
    expect(res.status).toBe(504);
    expect(res.body).toEqual({ error: 'platform_timeout' });
    expect(sim.calls.authorization_code).toBe(1);
  });

  test('a code the platform refuses is 400 code_rejected', async () => {
    const { app } = createTestApp({ sim });
    const res = await json(
      request(app).get('/platform/callback?code=not-a-code-the-platform-issued'),
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'code_rejected' });
  });

  test('wrong client credentials are 503 platform_misconfigured', async () => {
    const { app } = createTestApp({ sim, login: { clientSecret: 'wrong-secret' } });
    const res = await json(request(app).get(`/platform/callback?code=${code()}`));
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'platform_misconfigured' });
    expect(res.text).not.toContain('wrong-secret');
  });
});

describe('set-up mistakes', () => {
  test('without express-session the entry says what is missing', async () => {
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    // The default logger: the mistake must reach the console with no logger given.
    const { app } = createTestApp({ sim, withoutSession: true, login: { logger: undefined } });
    const res = await request(app)
      .get(`/platform/callback?code=${code()}`)
      .set('Accept', 'application/json');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'server_misconfigured' });
    expect(errors.mock.calls.join(' ')).toContain('app.use(session(');
    expect(sim.calls.authorization_code).toBe(0);
    errors.mockRestore();
  });

  test.each(['//evil.example/', 'https://evil.example/', '/\\evil.example', 'game'])(
    'successRedirect %s is refused at creation',
    (successRedirect) => {
      expect(() => platformLogin(loginOptions(sim, { successRedirect }))).toThrow(
        /successRedirect/,
      );
    },
  );

  test('an unknown option is refused by name', () => {
    expect(() => platformLogin({ ...loginOptions(sim), refreshSkew: 30 } as never)).toThrow(
      /refreshSkew/,
    );
  });
});

test('logout({ redirectTo }) refuses a path that is not on this site', () => {
  const { login } = createTestApp({ sim });
  expect(() => login.logout({ redirectTo: '//evil.example/' })).toThrow(/redirectTo/);
  expect(() => login.logout({ redirectTo: '/bye' })).not.toThrow();
});
