// What a route also needs: an afterLogin hook with the request, the response and the new login (it
// may refuse the entry, or answer itself), and scopes required per route (403 insufficient_scope).
// Against the real simulator, on express-session's memory store.
import request from 'supertest';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { SetupError, type AfterLoginHook } from 'express-platform-login';
import { createTestApp, expectLoginRequired, TEST_REDIRECT_URI } from '../helpers/test-app';
import { enter } from '../helpers/records';
import { useSimulator } from '../helpers/bed';

let sim: PlatformSimulator;
useSimulator((started) => (sim = started));

/** An app whose afterLogin is `hook`, with a route that needs the `payments` scope. */
function appWith(hook: AfterLoginHook) {
  const built = createTestApp({ sim, login: { afterLogin: hook } });
  return built;
}

const entryOf = async (app: ReturnType<typeof appWith>['app'], openId = 'player-ada') => {
  const agent = request.agent(app);
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId });
  const res = await agent
    .get(`/platform/callback?code=${encodeURIComponent(code)}`)
    .set('Accept', 'application/json');
  return { agent, res };
};

describe('afterLogin', () => {
  test('runs on every entry with the new login: a first entry creates the game profile from the open API', async () => {
    const profiles = new Map<string, string>();
    const entries: string[] = [];
    const { app } = appWith(async ({ req, player }) => {
      entries.push(req.path);
      if (!profiles.has(player.user.openId)) {
        const info = (await (await player.fetch('/userinfo')).json()) as { nickname: string };
        profiles.set(player.user.openId, info.nickname);
      }
    });
    const first = await entryOf(app);
    expect(first.res.status).toBe(303);
    expect((await first.agent.get('/api/me')).body).toMatchObject({ openId: 'player-ada' });
    const again = await entryOf(app);
    expect(again.res.status).toBe(303);
    expect(entries).toHaveLength(2);
    expect([...profiles]).toEqual([['player-ada', 'Ada']]);
  });

  test('false refuses the entry: 403 entry_refused, and no login is kept', async () => {
    const built = appWith(({ player }) => player.user.openId !== 'player-bo');
    const { agent, res } = await entryOf(built.app, 'player-bo');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'entry_refused' });
    expect((await agent.get('/api/me').set('Accept', 'application/json')).status).toBe(401);
    expect(await built.login.sessionsOf('player-bo')).toBe(0);
    // Another player is let in by the same hook.
    expect((await entryOf(built.app, 'player-ada')).res.status).toBe(303);
  });

  test('a hook that answers itself replaces the redirect; the login is kept', async () => {
    const { app } = appWith(({ res }) => res.redirect(303, '/welcome'));
    const { agent, res } = await entryOf(app);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/welcome');
    expect((await agent.get('/api/me')).status).toBe(200);
  });

  test('a hook that throws keeps no login', async () => {
    const built = appWith(() => {
      throw new Error('the game database is down');
    });
    const { agent, res } = await entryOf(built.app, 'player-cy');
    expect(res.status).toBe(500);
    expect((await agent.get('/api/me').set('Accept', 'application/json')).status).toBe(401);
    expect(await built.login.sessionsOf('player-cy')).toBe(0);
  });
});

describe('requireScopes', () => {
  const build = () => {
    const built = createTestApp({ sim });
    built.app.get('/api/info', built.login.requireScopes('user_info'), (_req, res) => {
      res.json({ ok: true });
    });
    built.app.get('/api/pay', built.login.requireScopes('user_info', 'payments'), (_req, res) => {
      res.json({ ok: true });
    });
    built.app.get(
      '/lobby/pay',
      built.login.middleware({ optional: true }),
      built.login.requireScopes('user_info'),
      (_req, res) => res.json({ ok: true }),
    );
    built.app.get('/unmounted/pay', built.login.requireScopes('user_info'), (_req, res) => {
      res.json({ ok: true });
    });
    built.app.use(built.login.errorHandler());
    return built;
  };

  test('a granted scope passes; a missing one is 403 insufficient_scope', async () => {
    const { app } = build();
    const { agent } = await enter(app, sim);
    expect((await agent.get('/api/info')).status).toBe(200);
    const refused = await agent.get('/api/pay').set('Accept', 'application/json');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'insufficient_scope' });
  });

  test('without a login it is still 401 login_required', async () => {
    const { app } = build();
    await expectLoginRequired(app, '/api/pay');
  });

  test('a visitor on an optional route is 401 login_required (a login comes before its scopes)', async () => {
    const { app } = build();
    await expectLoginRequired(app, '/lobby/pay');
    const { agent } = await enter(app, sim);
    expect((await agent.get('/lobby/pay')).status).toBe(200);
  });

  test('without login.middleware() in front it is 500 server_misconfigured', async () => {
    const { app } = build();
    const { agent } = await enter(app, sim);
    const res = await agent.get('/unmounted/pay').set('Accept', 'application/json');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'server_misconfigured' });
  });

  test('no scope at all is a mistake named at setup', () => {
    const { login } = createTestApp({ sim });
    expect(() => login.requireScopes()).toThrow(/requireScopes\(\.\.\.scopes\)/);
    expect(() => login.requireScopes('')).toThrow(SetupError);
    try {
      login.requireScopes();
    } catch (error) {
      expect(error).toMatchObject({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'scopes' });
    }
    expect.assertions(3);
  });
});
