// Property-based fuzzing of the middleware in front of the game's routes: generated methods, paths,
// query strings, Accept headers and session cookies (missing, garbage, forged, tampered, the real
// one among others). Only 200, 401 login_required or Express's 404 come back, never a 5xx; the
// platform is never called; no answer sets a cookie; the player's tokens never change.
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { useSimulator } from '../helpers/bed';
import { MemoryTokenStore, type TokenRecord } from 'express-platform-login';
import {
  acceptHeader,
  headerValue,
  httpMethod,
  listenRaw,
  queryString,
  type RawClient,
} from '../helpers/fuzz-http';
import { enter, storedRecord } from '../helpers/records';
import { createTestApp, SESSION_SECRET } from '../helpers/test-app';

/** Routes of the test app that answer GET behind the middleware, and paths that have none. */
const GET_ROUTES = ['/api/me', '/api/me/', '/API/ME', '/api/token'];
const OTHER_PATHS = ['/api/nowhere', '/api', '/api/me/more', '/api/%ZZ', '/api/..%2Fme'];

let sim: PlatformSimulator;
useSimulator((started) => (sim = started));
/** One logged-in session on the test app, its record as entered, and a raw client of the app. */
const store = new MemoryTokenStore();
let sessionId: string;
let before: TokenRecord;
let client: RawClient;

beforeAll(async () => {
  const { app } = createTestApp({ sim, login: { store } });
  ({ sessionId } = await enter(app, sim, 'player-ada'));
  before = (await storedRecord(store, sessionId))!;
  client = await listenRaw(app);
  sim.resetCalls();
});
afterAll(() => client.close());

/** The `connect.sid` cookie express-session sets for `id`: `s:<id>.<HMAC-SHA256>`, URL-encoded. */
function signedCookie(id: string, secret = SESSION_SECRET): string {
  const signature = createHmac('sha256', secret).update(id).digest('base64').replace(/=+$/, '');
  return `connect.sid=${encodeURIComponent(`s:${id}.${signature}`)}`;
}

/** Another cookie the browser may hold (never named connect.sid). */
const otherCookie = fc
  .tuple(fc.stringMatching(/^[a-z_]{1,10}$/), fc.stringMatching(/^[\w%.~-]{0,20}$/))
  .map(([name, value]) => `${name}=${value}`);

/** Cookie headers, each with whether it carries the logged-in session. */
const cookieHeader = (): fc.Arbitrary<{ cookie: string | undefined; loggedIn: boolean }> => {
  const real = signedCookie(sessionId);
  const no = (cookie: string | undefined) => ({ cookie, loggedIn: false });
  const yes = (cookie: string) => ({ cookie, loggedIn: true });
  return fc.oneof(
    fc.constant(no(undefined)),
    headerValue.map(no),
    fc.constant(yes(real)),
    fc.tuple(otherCookie, otherCookie).map(([a, b]) => yes(`${a}; ${real}; ${b}`)),
    fc.string({ minLength: 1, maxLength: 40 }).map((id) => no(signedCookie(id))),
    fc.constant(no(signedCookie(sessionId, 'another-secret'))),
    fc.constant(no(`connect.sid=${sessionId}`)),
    fc.constant(no(real.slice(0, -3))),
    headerValue.map((junk) => no(`connect.sid=${encodeURIComponent(junk)}; ${real}`)),
  );
};

test('any method, path, query, Accept and cookie: 200, 401 or 404, no platform call, no cookie, tokens unchanged', async () => {
  const path = fc.constantFrom(...GET_ROUTES, ...OTHER_PATHS);
  await fc.assert(
    fc.asyncProperty(
      httpMethod,
      path,
      queryString,
      acceptHeader,
      cookieHeader(),
      async (method, route, query, accept, { cookie, loggedIn }) => {
        const headers: Record<string, string> = { accept };
        if (cookie !== undefined) headers.cookie = cookie;
        const answer = await client.send({ method, path: `${route}?${query}`, headers });

        expect(answer.headers['set-cookie']).toBeUndefined();
        if (!loggedIn) {
          expect(answer.status).toBe(401);
          if (answer.headers['content-type']?.startsWith('application/json')) {
            expect(JSON.parse(answer.body)).toEqual({ error: 'login_required' });
          }
        } else if (method === 'GET' && GET_ROUTES.includes(route)) {
          expect(answer.status).toBe(200);
        } else {
          // Express's own answers for a route that does not take this method (404, or OPTIONS' 200).
          expect([200, 404]).toContain(answer.status);
        }
      },
    ),
    { numRuns: 1500 },
  );
  expect(sim.calls).toEqual({ authorization_code: 0, refresh_token: 0, invalid: 0, userinfo: 0 });
  expect(await storedRecord(store, sessionId)).toEqual(before);
});
