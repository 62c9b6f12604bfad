// A browser as far as the example's tests need one: its cookie jar, and the headers it sends when
// the platform's lobby sends it to the game.
import type { PlatformSimulator } from 'express-platform-login/simulator';

/** A browser's cookie handling, as far as these tests need it: one jar, every host, no redirects. */
export class Browser {
  readonly cookies = new Map<string, string>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set(
        'Cookie',
        [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      );
    }
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      const expires = attributes.find((a) => /^\s*expires=/i.test(a))?.split('=')[1];
      if (value === '' || (expires !== undefined && Date.parse(expires) <= Date.now())) {
        this.cookies.delete(name);
      } else {
        this.cookies.set(name, value);
      }
    }
    return res;
  }

  /** The express-session id behind the signed `connect.sid` cookie. */
  sessionId(): string {
    const cookie = decodeURIComponent(this.cookies.get('connect.sid') ?? '');
    const id = /^s:(.+)\.[^.]+$/.exec(cookie)?.[1];
    if (id === undefined) throw new Error('no session cookie');
    return id;
  }
}

/** The headers a browser sends when the platform's lobby at `sim` sends it to the game. */
export const fromLobby = (sim: PlatformSimulator): Record<string, string> => ({
  Referer: `${sim.url}/`,
  'Sec-Fetch-Site': 'cross-site',
  'Sec-Fetch-Mode': 'navigate',
  'Sec-Fetch-Dest': 'document',
});
