// The session cookie profile for a game the platform shows in a cross-site iframe, as options to
// spread into express-session: `app.use(session({ ...embeddedSessionCookie(), store, secret, … }))`.
import type { CookieOptions } from 'express-session';
import { z } from 'zod';
import { parseOptions, type OptionsSchema } from '../util/parse-options';

/** RFC 6265 cookie-name characters (a token), without the `__Host-` prefix the helper adds. */
const COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;

const embeddedSessionCookieShape = {
  /** Cookie name after the `__Host-` prefix. Defaults to `'sid'` (the cookie is `__Host-sid`). */
  name: z
    .string({ error: 'must be 1–64 cookie-name characters (letters, digits, -._~…)' })
    .regex(COOKIE_NAME)
    .default('sid'),
  /** Lifetime of the cookie in milliseconds; none: a browser-session cookie. Defaults to none. */
  maxAgeMs: z
    .number({ error: 'must be a positive integer number of milliseconds' })
    .int()
    .positive()
    .optional(),
};

const embeddedSessionCookieSchema: OptionsSchema<typeof embeddedSessionCookieShape> =
  z.strictObject(embeddedSessionCookieShape);

/** Options of {@link embeddedSessionCookie}. */
export type EmbeddedSessionCookieOptions = z.input<typeof embeddedSessionCookieSchema>;

/** The `name` and `cookie` options of express-session for the embedded profile. */
export interface EmbeddedSessionCookie {
  name: string;
  cookie: CookieOptions & {
    path: '/';
    httpOnly: true;
    secure: true;
    sameSite: 'none';
    partitioned: true;
  };
}

/**
 * The session cookie for a game inside the platform's iframe:
 * - `SameSite=None` — any other value and the browser neither stores nor sends the cookie in a
 *   cross-site frame (this is why embedded mode needs `login.csrfProtection()`);
 * - `Secure` — required by `SameSite=None`, `Partitioned` and `__Host-`; behind a TLS-terminating
 *   proxy set `app.set('trust proxy', …)` or express-session never sends it;
 * - `Partitioned` (CHIPS) — the cookie is kept per top-level site: browsers that support CHIPS keep
 *   it inside the platform's page even when they block third-party cookies, and never send it when
 *   another site is the top-level page;
 * - a `__Host-` name, `Path=/` and no `Domain` — no sibling subdomain can set or shadow it;
 * - `HttpOnly` — scripts never see it.
 * Pass the same `name` to `login.logout({ cookieName })` so logout clears it.
 */
export function embeddedSessionCookie(
  options: EmbeddedSessionCookieOptions = {},
): EmbeddedSessionCookie {
  const config = parseOptions(embeddedSessionCookieSchema, options, 'embeddedSessionCookie()');
  return {
    name: `__Host-${config.name.replace(/^__Host-/, '')}`,
    cookie: {
      path: '/',
      httpOnly: true,
      secure: true,
      sameSite: 'none',
      partitioned: true,
      ...(config.maxAgeMs === undefined ? {} : { maxAge: config.maxAgeMs }),
    },
  };
}
