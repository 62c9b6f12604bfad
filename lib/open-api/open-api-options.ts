// The `api` options of platformLogin(), and how the open-API client reaches the platform, derived
// from them once: the bases by name, parsed.
import { z } from 'zod';
import { integerOption, type OptionsSchema } from '../util/parse-options';

const httpUrl = z
  .string({ error: 'must be an absolute http(s) URL' })
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol));

const apiShape = {
  /** Base URL of the platform's open API used by `req.platformFetch()`. Defaults to `authUrl`. */
  url: httpUrl.optional(),
  /**
   * More open-API bases where the platform has several (payments, social…), by name: a call picks
   * one with `platformFetch('/path', { api: 'payments' })`; an absolute URL may lie under any of
   * them, and the player's token goes nowhere else. `default` is `url`. Defaults to `{}`.
   */
  urls: z
    .record(
      z.string().regex(/^(?!default$)[A-Za-z0-9_-]{1,64}$/, {
        error:
          'names must be 1-64 letters, digits, "_" or "-" (and not "default", which is api.url)',
      }),
      httpUrl,
      { error: 'must be an object of name → absolute http(s) URL' },
    )
    .default({}),
  /**
   * Deadline of one open-API call (`platformFetch`, a socket's or a job's `fetch`), headers and
   * body, in milliseconds (1 to 300000); past it the call rejects with 504 `platform_timeout`.
   * Defaults to `10000`.
   */
  timeoutMs: integerOption(1, 300_000, ' number of milliseconds').default(10_000),
  /** How the open API is given the access token: `'header'` (Bearer) or `'query'`. Defaults to `'header'`. */
  tokenPlacement: z
    .enum(['header', 'query'], { error: "must be 'header' or 'query'" })
    .default('header'),
  /** Query parameter name when `tokenPlacement` is `'query'`. Defaults to `'access_token'`. */
  tokenQueryParameter: z
    .string({ error: 'must be a non-empty string' })
    .min(1)
    .default('access_token'),
};

/** The `api` options of platformLogin(): the platform's open API, called by `req.platformFetch()`, sockets and jobs. */
export const apiOptionsSchema: OptionsSchema<typeof apiShape> = z.strictObject(apiShape);

/** One open-API base, computed once from the options. */
export interface OpenApiBase {
  /** The name a call picks it by (`{ api: name }`); `default` for `api.url`. */
  name: string;
  /** The base without a trailing slash. */
  href: string;
  url: URL;
}

/** How routes, sockets and jobs reach the open API: the `api` options, their bases parsed, a fetch. */
export interface OpenApiSettings extends Omit<z.output<typeof apiOptionsSchema>, 'url' | 'urls'> {
  /** `api.url` (named `default`, else `authUrl`) first, then `api.urls` in their order. */
  bases: readonly OpenApiBase[];
  /** The token client's `fetch`, else the global one. */
  fetch: typeof fetch;
}

/** The settings of the open-API client, derived once from the `api` options. */
export function openApiSettings(
  options: z.output<typeof apiOptionsSchema>,
  authUrl: string,
  fetch: typeof globalThis.fetch,
): OpenApiSettings {
  const bases = Object.entries({ default: options.url ?? authUrl, ...options.urls }).map(
    ([name, href]) => ({ name, href: new URL(href).href.replace(/\/+$/, ''), url: new URL(href) }),
  );
  return { ...options, bases, fetch };
}
