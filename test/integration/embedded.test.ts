// Embedded mode over real HTTP (the app behind a TLS-terminating proxy, as in production): the
// cookie profile, the cookie-check landing hop, frame-ancestors, and CSRF protection incl. logout.
import express, { type Express } from 'express';
import session from 'express-session';
import request, { type Response } from 'supertest';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import {
  platformLogin,
  type PlatformLogin,
  type PlatformLoginEvents,
  type PlatformLoginOptions,
} from 'express-platform-login';
import { embeddedSessionCookie } from '../../lib/entry/embedded-cookie';
import { entryApp, loginOptions, SESSION_SECRET, TEST_REDIRECT_URI } from '../helpers/test-app';
import { useSimulator } from '../helpers/bed';

const PLATFORM = 'https://platform.example';
const COOKIE = '__Host-sid';
/** What the TLS-terminating proxy in front of the app adds. */
const VIA_PROXY = { 'X-Forwarded-Proto': 'https' };
const FRAMED_ENTRY = {
  ...VIA_PROXY,
  'Sec-Fetch-Site': 'cross-site',
  'Sec-Fetch-Dest': 'iframe',
  Referer: `${PLATFORM}/`,
};

let sim: PlatformSimulator;
useSimulator((started) => (sim = started));

interface EmbeddedApp {
  app: Express;
  login: PlatformLogin;
  scores: number[];
}

function embeddedApp(extra: Partial<PlatformLoginOptions> = {}): EmbeddedApp {
  const login = platformLogin(
    loginOptions(sim, { embedded: true, platformOrigins: [PLATFORM], ...extra }),
  );
  const profile = embeddedSessionCookie();
  const scores: number[] = [];
  const app = express();
  app.set('trust proxy', 'loopback');
  app.use(login.frameAncestors());
  app.use(session({ ...profile, secret: SESSION_SECRET, resave: false, saveUninitialized: false }));
  app.use('/platform/callback', login.callback);
  app.get('/', login.middleware({ optional: true }), (req, res) => {
    res.send(
      req.platformUser ? `playing as ${req.platformUser.openId}` : 'Enter from the platform',
    );
  });
  app.use('/api', login.csrfProtection(), login.middleware());
  app.get('/api/me', (req, res) => res.json(req.platformUser));
  app.post('/api/score', (_req, res) => {
    scores.push(scores.length + 1);
    res.json({ scores: scores.length });
  });
  app.post('/logout', login.logout({ cookieName: profile.name }));
  return { app, login, scores };
}

function setCookie(res: Response): string {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const cookie = cookies.find((c) => c.startsWith(`${COOKIE}=`));
  if (cookie === undefined) throw new Error(`no ${COOKIE} cookie set`);
  return cookie;
}
const pair = (res: Response): string => setCookie(res).split(';')[0]!;

/** Enters inside the platform's frame; resolves the session cookie (`name=value`). */
async function enter(app: Express, openId = 'player-ada'): Promise<string> {
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId });
  const res = await request(app).get(`/platform/callback?code=${code}`).set(FRAMED_ENTRY);
  expect(res.status).toBe(303);
  return pair(res);
}

/** A request with the session `cookie` through the TLS-terminating proxy, with `headers`. */
const viaProxy = (
  app: Express,
  method: 'get' | 'post',
  path: string,
  cookie: string,
  headers: Record<string, string> = {},
) => request(app)[method](path).set(VIA_PROXY).set('Cookie', cookie).set(headers);

describe('embeddedSessionCookie()', () => {
  test('is the documented profile, ready to spread into express-session', () => {
    expect(embeddedSessionCookie()).toEqual({
      name: '__Host-sid',
      cookie: {
        path: '/',
        httpOnly: true,
        secure: true,
        sameSite: 'none',
        partitioned: true,
      },
    });
    expect(embeddedSessionCookie({ name: 'game', maxAgeMs: 3_600_000 })).toMatchObject({
      name: '__Host-game',
      cookie: { maxAge: 3_600_000 },
    });
    expect(embeddedSessionCookie({ name: '__Host-game' }).name).toBe('__Host-game');
  });

  test('wrong options are a SetupError naming the option', () => {
    expect(() => embeddedSessionCookie({ name: 'a b' })).toThrow(/`name`/);
    expect(() => embeddedSessionCookie({ domain: 'x' } as never)).toThrow(
      /unknown option `domain`/,
    );
  });

  test('the entry sets it with every attribute, and without Domain', async () => {
    const { app } = embeddedApp();
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    const res = await request(app).get(`/platform/callback?code=${code}`).set(FRAMED_ENTRY);
    const attributes = setCookie(res)
      .split(';')
      .slice(1)
      .map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(
      expect.arrayContaining(['path=/', 'httponly', 'secure', 'partitioned', 'samesite=none']),
    );
    expect(attributes.some((a) => a.startsWith('domain='))).toBe(false);
  });
});

describe('the cookie check after an entry', () => {
  test('a browser that keeps the cookie lands on the game through one check hop', async () => {
    const { app } = embeddedApp();
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-ada' });
    const entry = await request(app).get(`/platform/callback?code=${code}`).set(FRAMED_ENTRY);
    expect(entry.status).toBe(303);
    expect(entry.headers.location).toBe('?cookie_check=1');
    // The browser resolves `?cookie_check=1` against the callback URL.
    const hop = await request(app)
      .get('/platform/callback?cookie_check=1')
      .set(FRAMED_ENTRY)
      .set('Cookie', pair(entry));
    expect(hop.status).toBe(303);
    expect(hop.headers.location).toBe('/');
    expect(hop.headers['cache-control']).toBe('no-store');
    const game = await request(app).get('/').set(VIA_PROXY).set('Cookie', pair(entry));
    expect(game.text).toBe('playing as player-ada');
    expect(sim.calls.authorization_code).toBe(1);
  });

  test('a browser that refused the cookie gets a diagnostic page, not a loop that burns codes', async () => {
    const { app, login } = embeddedApp();
    const refused: PlatformLoginEvents['cookiesRefused'][0][] = [];
    login.on('cookiesRefused', (event) => refused.push(event));
    await enter(app); // the cookie is set, and the browser drops it
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const hop = await request(app)
        .get('/platform/callback?cookie_check=1')
        .set(FRAMED_ENTRY)
        .set('Accept', 'text/html');
      expect(hop.status).toBe(400);
      expect(hop.headers.location).toBeUndefined();
      expect(hop.text).toContain('did not keep the game&#39;s login cookie');
    }
    const json = await request(app)
      .get('/platform/callback?cookie_check=1')
      .set(VIA_PROXY)
      .set('Accept', 'application/json');
    expect(json.body).toEqual({ error: 'cookies_blocked' });
    expect(sim.calls.authorization_code).toBe(1);
    expect(refused).toEqual([
      { framed: true },
      { framed: true },
      { framed: true },
      { framed: false },
    ]);
  });

  test('without embedded mode the entry lands straight on successRedirect', async () => {
    const login = platformLogin(loginOptions(sim));
    const app = entryApp(login);
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    const res = await request(app).get(`/platform/callback?code=${code}`);
    expect(res.headers.location).toBe('/');
    // …and the marker is then just an invalid entry.
    await request(app).get('/platform/callback?cookie_check=1').expect(400);
  });
});

describe('frame-ancestors', () => {
  test('every response allows framing by the platform origins only', async () => {
    const { app } = embeddedApp({ platformOrigins: [PLATFORM, 'https://M.Platform.Example:443/'] });
    for (const path of ['/', '/platform/callback', '/api/me']) {
      const res = await request(app).get(path).set(VIA_PROXY);
      expect(res.headers['content-security-policy']).toBe(
        `frame-ancestors ${PLATFORM} https://m.platform.example`,
      );
    }
  });

  test('a policy set before it stays in force beside it', async () => {
    const login = platformLogin(loginOptions(sim, { platformOrigins: [PLATFORM] }));
    const app = express();
    app.use((_req, res, next) => {
      res.setHeader('Content-Security-Policy', "default-src 'self'");
      next();
    });
    app.use(login.frameAncestors());
    app.get('/', (_req, res) => res.send('ok'));
    const res = await request(app).get('/');
    expect(res.headers['content-security-policy']).toBe(
      `default-src 'self', frame-ancestors ${PLATFORM}`,
    );
  });

  test('without platformOrigins: a SetupError naming it, for frameAncestors() and for embedded', () => {
    // The test helpers name the simulator's origins; left out here, the check chosen explicitly.
    const noOrigins = {
      platformOrigins: undefined,
      entry: { context: { mode: 'report' as const } },
    };
    expect(() => platformLogin(loginOptions(sim, noOrigins)).frameAncestors()).toThrow(
      /`platformOrigins`/,
    );
    expect(() => platformLogin(loginOptions(sim, noOrigins)).frameAncestors()).toThrow(
      expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'platformOrigins' }),
    );
    expect(() => platformLogin(loginOptions(sim, { ...noOrigins, embedded: true }))).toThrow(
      /`platformOrigins` is required when `embedded` is true/,
    );
  });
});

describe('CSRF protection of state-changing routes', () => {
  test.each([
    ['a fetch from the game page (same-origin)', { 'Sec-Fetch-Site': 'same-origin' }, 200],
    ['an API client sending neither header', {}, 200],
    ['an old browser whose Origin is this host', { Origin: 'https://game.example' }, 200],
    [
      'a form on an attacker page (cross-site)',
      { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://attacker.example' },
      403,
    ],
    [
      'a page of a sibling subdomain (same-site)',
      { 'Sec-Fetch-Site': 'same-site', Origin: 'https://shop.game.example' },
      403,
    ],
    ['an old browser on an attacker page', { Origin: 'https://attacker.example' }, 403],
    ['a sandboxed frame (Origin: null)', { Origin: 'null' }, 403],
  ])('%s → %s', async (_name, headers, status) => {
    const { app, scores } = embeddedApp();
    const cookie = await enter(app);
    const res = await request(app)
      .post('/api/score')
      .set(VIA_PROXY)
      .set('Host', 'game.example')
      .set('Cookie', cookie)
      .set(headers as Record<string, string>)
      .set('Accept', 'application/json');
    expect(res.status).toBe(status);
    if (status === 403) {
      expect(res.body).toEqual({ error: 'cross_origin_refused' });
      expect(scores).toEqual([]);
    } else {
      expect(scores).toEqual([1]);
    }
  });

  test('gameOrigins lets the game front end on another origin through', async () => {
    const { app, scores } = embeddedApp({ gameOrigins: ['https://shop.game.example'] });
    await viaProxy(app, 'post', '/api/score', await enter(app), {
      'Sec-Fetch-Site': 'same-site',
      Origin: 'https://shop.game.example',
    }).expect(200);
    expect(scores).toEqual([1]);
  });

  test('safe methods are never refused', async () => {
    const { app } = embeddedApp();
    await viaProxy(app, 'get', '/api/me', await enter(app), {
      'Sec-Fetch-Site': 'cross-site',
      Origin: 'https://attacker.example',
    }).expect(200);
  });
});

describe('logout', () => {
  test('from another site is refused and the player stays logged in', async () => {
    const { app } = embeddedApp();
    const cookie = await enter(app);
    const res = await viaProxy(app, 'post', '/logout', cookie, {
      'Sec-Fetch-Site': 'cross-site',
      Origin: 'https://attacker.example',
      Accept: 'application/json',
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'cross_origin_refused' });
    await viaProxy(app, 'get', '/api/me', cookie).expect(200);
  });

  test('from the game page ends the login and clears the partitioned cookie', async () => {
    const { app } = embeddedApp();
    const cookie = await enter(app);
    const res = await viaProxy(app, 'post', '/logout', cookie, { 'Sec-Fetch-Site': 'same-origin' });
    expect(res.status).toBe(204);
    const cleared = setCookie(res).toLowerCase();
    expect(cleared).toMatch(/^__host-sid=;/);
    expect(cleared).toContain('expires=thu, 01 jan 1970');
    for (const attribute of ['path=/', 'secure', 'partitioned', 'samesite=none']) {
      expect(cleared).toContain(attribute);
    }
    await viaProxy(app, 'get', '/api/me', cookie).expect(401);
  });
});
