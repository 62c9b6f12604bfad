// Talks to game backend processes (started by test/helpers/spawn-game-backends.ts) the way a
// browser would: enter through one of them, then call the API with the session cookie on any of
// them.
import request from 'supertest';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { sessionCookieFrom, sessionIdFrom } from './session-cookie';
import { TEST_REDIRECT_URI } from './test-app';

/** A logged-in browser: its session cookie (`name=value`) and the session id behind it. */
export interface ProcessLogin {
  cookie: string;
  sessionId: string;
}

/** What one API call answered. */
export interface ApiAnswer {
  status: number;
  body: { accessToken?: string; pid?: number; error?: string };
  retryAfter?: string;
}

/** The parts of a supertest response the fault tests look at. */
export const apiAnswerOf = (res: request.Response): ApiAnswer => ({
  status: res.status,
  body: res.body as ApiAnswer['body'],
  retryAfter: res.headers['retry-after'] as string | undefined,
});

/** Enters as `openId` through the process at `url`; fails unless it lands (303). */
export async function enterThrough(
  url: string,
  sim: PlatformSimulator,
  openId?: string,
): Promise<ProcessLogin> {
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, ...(openId ? { openId } : {}) });
  const res = await request(url).get(`/platform/callback?code=${encodeURIComponent(code)}`);
  if (res.status !== 303) throw new Error(`entry failed with ${res.status}: ${res.text}`);
  return { cookie: sessionCookieFrom(res), sessionId: sessionIdFrom(res) };
}

/** GET /api/token on the process at `url` with the login's cookie, as an API client. */
export async function tokenFrom(url: string, login: ProcessLogin): Promise<ApiAnswer> {
  const res = await request(url)
    .get('/api/token')
    .set('Cookie', login.cookie)
    .set('Accept', 'application/json');
  return apiAnswerOf(res);
}

/** Every answer 200 with one and the same access token, a new one (not `old`'s); returns it. */
export function expectOneNewToken(answers: readonly ApiAnswer[], old: { accessToken: string }) {
  expect(answers.map((a) => a.status)).toEqual(Array(answers.length).fill(200));
  const tokens = new Set(answers.map((a) => a.body.accessToken));
  expect(tokens.size).toBe(1);
  expect(tokens.has(old.accessToken)).toBe(false);
  return [...tokens][0];
}
