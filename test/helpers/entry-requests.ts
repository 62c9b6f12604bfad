// What the entry tests send: the platform's origin, the headers a browser sends when the platform's
// page opens the game, and the spellings of the callback path a router may still match; and what
// a player sees of logout, on Express 4 and 5 alike.
import { sendFrom, type Answer } from './http-from';

export const PLATFORM = 'https://platform.example';

/** A top-level navigation from the platform's page: what a real entry carries. */
export const FROM_PLATFORM = {
  'Sec-Fetch-Site': 'cross-site',
  'Sec-Fetch-Mode': 'navigate',
  'Sec-Fetch-Dest': 'document',
  Referer: `${PLATFORM}/`,
};

/** The same navigation started by another site's page (a link, `location = …`). */
export const FROM_ATTACKER = { ...FROM_PLATFORM, Referer: 'https://attacker.example/' };

export const JSON_ACCEPT = { Accept: 'application/json' };

/** Spellings of the callback path a router may still match (case, slashes, dot segments, escapes). */
export const SPELLINGS = [
  '/platform/callback',
  '/platform/callback/',
  '/platform/callback//',
  '/platform/callback///',
  '/PLATFORM/CALLBACK',
  '/Platform/Callback/',
  '/platform/callback/.',
  '/platform/callback/./',
  '/platform/./callback',
  '/platform//callback',
  '//platform/callback',
  '/platform%2Fcallback',
  '/platform/callback%2F',
  '/platform/callback%2f%2f',
  '/platform/%63allback',
];

/** The session cookie (`connect.sid=…`) an answer set. */
export const cookieOf = (answer: Answer): string =>
  String(answer.headers['set-cookie']).split(';')[0]!;

/**
 * What a player sees of /logout on the app listening at `port`, its logout mounted with
 * `app[mount]`: entered with `code` (303), GET and HEAD are 405 with Allow: POST (GET says
 * method_not_allowed), the player is still logged in (GET /api/me 200), and POST logs out (204)
 * wherever the mount answers POST.
 */
export async function expectLogoutPostOnly(port: number, code: string, mount: string) {
  const entry = await sendFrom('127.0.0.1', port, `/platform/callback?code=${code}`, {
    headers: FROM_PLATFORM,
  });
  expect(entry.status).toBe(303);
  const cookie = cookieOf(entry);
  for (const method of ['GET', 'HEAD']) {
    const answer = await sendFrom('127.0.0.1', port, '/logout', {
      method,
      headers: { ...JSON_ACCEPT, Cookie: cookie },
    });
    expect({ method, status: answer.status, allow: answer.headers.allow }).toEqual({
      method,
      status: 405,
      allow: 'POST',
    });
    if (method === 'GET') expect(JSON.parse(answer.body)).toEqual({ error: 'method_not_allowed' });
  }
  const me = await sendFrom('127.0.0.1', port, '/api/me', {
    headers: { ...JSON_ACCEPT, Cookie: cookie },
  });
  expect(me.status).toBe(200);
  if (mount === 'get') return;
  const post = await sendFrom('127.0.0.1', port, '/logout', {
    method: 'POST',
    headers: { Cookie: cookie },
  });
  expect(post.status).toBe(204);
}
