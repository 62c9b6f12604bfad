// Reads the express-session id out of a response's Set-Cookie, so a test can look at what the
// token store holds for that session.
import type { Response } from 'supertest';

export function sessionIdFrom(res: Response, cookieName = 'connect.sid'): string {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const cookie = cookies.find((c) => c.startsWith(`${cookieName}=`));
  if (!cookie) throw new Error(`the response set no ${cookieName} cookie`);
  const value = decodeURIComponent(cookie.slice(cookieName.length + 1).split(';')[0]!);
  // Signed cookie: "s:<id>.<signature>"
  const match = /^s:(.+)\.[^.]+$/.exec(value);
  if (!match) throw new Error('unexpected session cookie format');
  return match[1]!;
}

/** The raw `name=value` of the session cookie, to send it from another client. */
export function sessionCookieFrom(res: Response, cookieName = 'connect.sid'): string {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const cookie = cookies.find((c) => c.startsWith(`${cookieName}=`));
  if (!cookie) throw new Error(`the response set no ${cookieName} cookie`);
  return cookie.split(';')[0]!;
}
