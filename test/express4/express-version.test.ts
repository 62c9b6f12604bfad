// The Express-version-specific surface on Express 4 (the `express4` Jest project maps `express` to
// the `express4` alias for the package and the test app alike). Everything else the package does
// sits above Express and is tested once, on Express 5, in the `integration` project. What differs
// between the majors, and so is tested here:
// - which spellings of the callback path Express's router matches (case, trailing and doubled
//   slashes, dot segments, escapes: path-to-regexp 0.1 in Express 4, 8 in Express 5): every
//   spelling that reaches the entry is guarded there, and a genuine entry is served on them;
// - mounting: the callback router under `app.use(path)`, logout under `app.use/get/all`;
// - the request and response APIs the package calls (the accessors on Express 4's request
//   prototype, the entry's redirect and session cookie, JSON answers, logout): one whole login.
import express from 'express';
import expressPackage from 'express/package.json';
import session from 'express-session';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { platformLogin } from 'express-platform-login';
import {
  createTestApp,
  loginOptions,
  SESSION_SECRET,
  TEST_REDIRECT_URI,
} from '../helpers/test-app';
import { listen, sendFrom, type Listening } from '../helpers/http-from';
import {
  cookieOf,
  expectLogoutPostOnly,
  FROM_ATTACKER,
  FROM_PLATFORM,
  JSON_ACCEPT,
  PLATFORM,
  SPELLINGS,
} from '../helpers/entry-requests';

let sim: PlatformSimulator;
const apps: Listening[] = [];

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await sim.close();
});
beforeEach(() => sim.resetCalls());

const issue = (openId = 'player-ada'): string =>
  sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId });

/** The test app (README mounting) on Express 4, listening. */
async function start(): Promise<number> {
  const { app } = createTestApp({ sim, login: { platformOrigins: [PLATFORM] } });
  const listening = await listen(app);
  apps.push(listening);
  return listening.port;
}

test('this project resolves `express` to Express 4', () => {
  expect(expressPackage.version).toMatch(/^4\./);
  expect(typeof express.Router).toBe('function');
});

test('a whole login on Express 4: entry, the player on a route, token, open API, logout', async () => {
  const port = await start();
  const entry = await sendFrom('127.0.0.1', port, `/platform/callback?code=${issue()}`, {
    headers: FROM_PLATFORM,
  });
  expect(entry.status).toBe(303);
  expect(entry.headers.location).toBe('/');
  const cookie = cookieOf(entry);
  const asPlayer = { headers: { ...JSON_ACCEPT, Cookie: cookie } };

  const me = await sendFrom('127.0.0.1', port, '/api/me', asPlayer);
  expect(me.status).toBe(200);
  expect(JSON.parse(me.body)).toMatchObject({ openId: 'player-ada' });
  const token = await sendFrom('127.0.0.1', port, '/api/token', asPlayer);
  expect(token.status).toBe(200);
  expect(JSON.parse(token.body).accessToken).toEqual(expect.any(String));
  const profile = await sendFrom('127.0.0.1', port, '/api/profile', asPlayer);
  expect(profile.status).toBe(200);
  expect(JSON.parse(profile.body)).toMatchObject({ open_id: 'player-ada' });
  expect(sim.calls.authorization_code).toBe(1);

  const logout = await sendFrom('127.0.0.1', port, '/logout', { ...asPlayer, method: 'POST' });
  expect(logout.status).toBe(204);
  const after = await sendFrom('127.0.0.1', port, '/api/me', asPlayer);
  expect(after.status).toBe(401);
  expect(JSON.parse(after.body)).toEqual(expect.objectContaining({ error: 'login_required' }));
});

describe('the callback path on every spelling Express 4 matches', () => {
  test('a forged entry is refused on every spelling (or not found): nothing sent, no cookie', async () => {
    const port = await start();
    const reached: string[] = [];
    for (const path of SPELLINGS) {
      const answer = await sendFrom('127.0.0.1', port, `${path}?code=${issue('player-cy')}`, {
        headers: { ...FROM_ATTACKER, ...JSON_ACCEPT },
      });
      expect({ path, status: answer.status }).toEqual({
        path,
        status: answer.status === 404 ? 404 : 403,
      });
      if (answer.status === 403) {
        reached.push(path);
        expect(JSON.parse(answer.body)).toEqual({ error: 'entry_context_refused' });
      }
      expect(answer.headers['set-cookie']).toBeUndefined();
    }
    // Express 4's router matches case and a trailing slash, as the README's mounting expects.
    expect(reached).toEqual(
      expect.arrayContaining(['/platform/callback', '/platform/callback/', '/PLATFORM/CALLBACK']),
    );
    expect(sim.calls.authorization_code).toBe(0);
  });

  test('a genuine entry is served on any spelling the router matches', async () => {
    const port = await start();
    for (const path of ['/platform/callback/', '/PLATFORM/CALLBACK', '/Platform/Callback/']) {
      const answer = await sendFrom('127.0.0.1', port, `${path}?code=${issue()}`, {
        headers: FROM_PLATFORM,
      });
      expect({ path, status: answer.status }).toEqual({ path, status: 303 });
    }
    expect(sim.calls.authorization_code).toBe(3);
  });
});

describe('logout answers POST only, wherever it is mounted on Express 4', () => {
  test.each(['use', 'get', 'all'] as const)(
    'app.%s: GET and HEAD are 405 with Allow: POST, the player stays logged in',
    async (mount) => {
      const login = platformLogin(loginOptions(sim, { platformOrigins: [PLATFORM] }));
      const app = express();
      app.use(session({ secret: SESSION_SECRET, resave: false, saveUninitialized: false }));
      app.use('/platform/callback', login.callback);
      app.get('/api/me', login.middleware(), (req, res) => {
        res.json(req.platformUser);
      });
      app[mount]('/logout', login.logout());
      const listening = await listen(app);
      apps.push(listening);
      await expectLogoutPostOnly(listening.port, issue(), mount);
    },
  );
});
