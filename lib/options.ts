// The options of every public entry point of PlatformLogin: documented interfaces (what an editor
// shows on hover) and the strict schemas that parse them once, at creation. The token client's
// options are the client's own schema, composed here, so both refuse the same values.
import { z } from 'zod';
import type { MeterProvider } from '@opentelemetry/api';
import type { TokenStore } from './core/token-store';
import { parseOptions, type SameOptions } from './util/parse-options';
import { invalidOption } from './errors';
import {
  tokenClientOptionsSchema,
  tokenClientTuningSchema,
  type TokenClientTuning,
} from './client/token-client-options';
import { isSameSitePath } from './cross-site/same-site-path';
import { entryContextSchema, type EntryContextOptions } from './entry/entry-context';
import { originListSchema } from './cross-site/origins';
import type { MiddlewareOptions } from './http/middleware';
import type { LogoutOptions } from './http/logout';
import { isPlatformLogger, type PlatformLogger } from './observability/logger';
import type { AfterLoginHook } from './entry/after-login';

/** Options of {@link platformLogin}: the quick start's handful, then the tuning grouped by what it tunes. */
export interface PlatformLoginOptions {
  /**
   * Base URL of the platform's token service: an absolute http(s) URL without credentials, query or
   * fragment; the token endpoint is `${authUrl}/token`. Required.
   */
  authUrl: string;
  /** The application's `client_id` on the platform (at most 512 characters). Required. */
  clientId: string;
  /** The application's `client_secret`. Kept on the server; never logged. Required. */
  clientSecret: string;
  /**
   * The `redirect_uri` registered on the platform: an absolute http(s) URL without a fragment, sent
   * byte for byte to the token endpoint. Required.
   */
  redirectUri: string;
  /** Where token records live. Defaults to a `MemoryTokenStore` (one process only). */
  store?: TokenStore;
  /**
   * Origins of the platform's pages that open or frame the game, e.g. `['https://platform.example']`.
   * Read by `entry.context` and `frameAncestors()`; required by both and by `embedded`. Defaults to none.
   */
  platformOrigins?: string[];
  /**
   * Origins of the game's own pages on other hosts (a front end on a CDN) allowed to send
   * state-changing requests to `csrfProtection()` routes and `logout()`. Defaults to none: same
   * origin only.
   */
  gameOrigins?: string[];
  /**
   * The platform shows the game in a cross-site iframe: an entry lands through a cookie check
   * (`?cookie_check=1` on the callback) that shows a diagnostic page when the browser refused the
   * session cookie, and framed entries pass the entry context. Defaults to `false`.
   */
  embedded?: boolean;
  /** Where a successful entry lands (303). A path on this site. Defaults to `'/'`. */
  successRedirect?: string;
  /**
   * Lifetime of a session in the session store, in seconds (at least 60), used when the session
   * cookie has no `maxAge` (connect-redis then keeps sessions for its `ttl`, 86400 by default). A
   * session cookie with `maxAge` wins. Token records and per-player index entries never outlive it;
   * a session kept alive by activity keeps its record. Defaults to `86400`.
   */
  sessionMaxAgeSeconds?: number;
  /**
   * `true`: the package answers its errors itself (JSON for API clients, a small HTML page for
   * browsers). `false`: errors go to `next(err)` for the app's error middleware. Defaults to `true`.
   */
  handleErrors?: boolean;
  /**
   * A pino-compatible logger (`debug/info/warn/error(fields, message)`). Defaults to
   * defaultLogger(): warnings and errors (setup mistakes, 5xx answers) on the console, debug and
   * info lines only with `DEBUG=express-platform-login:*`.
   */
  logger?: PlatformLogger;
  /**
   * OpenTelemetry MeterProvider for the metrics. Defaults to the global one (a no-op until an SDK
   * is registered).
   */
  meterProvider?: MeterProvider;
  /**
   * Runs after every successful entry, once the session holds the login and before the redirect:
   * `({ req, res, player }) => …` with the player's `user`, `token()` and `fetch()`. Resolve `false`
   * to refuse the entry (403 `entry_refused`, no login kept); answer yourself to replace the
   * redirect. Defaults to none.
   */
  afterLogin?: AfterLoginHook;
  /** How the token endpoint client talks to the platform (timeouts, retries, encoding, fetch). Defaults to `{}`. */
  tokenClient?: TokenClientTuning;
  /** When and how a login's access token is refreshed. Defaults to `{}`. */
  refresh?: RefreshOptions;
  /** The entry (the callback the platform sends players to): its checks and limits. Defaults to `{}`. */
  entry?: EntryOptions;
  /** The platform's open API, called by `req.platformFetch()`, sockets and jobs. Defaults to `{}`. */
  api?: ApiOptions;
}

/** The `refresh` options of {@link platformLogin}. */
export interface RefreshOptions {
  /**
   * Refresh before the handler runs when less than this is left of the access token, in seconds
   * (0 to 3600). Defaults to `60`.
   */
  skewSeconds?: number;
  /**
   * Past this fraction of the access token's lifetime, refresh in the background while the request
   * goes on with the current token. `1` turns background refresh off. Defaults to `0.5`.
   */
  aheadFraction?: number;
  /**
   * After a refresh fails on platform trouble, further refreshes of that login wait this long, in
   * seconds (0 to 300; requests are served with the current token while it is valid). Defaults to `5`.
   */
  failureCooldownSeconds?: number;
  /**
   * Lifetime of a refresh token when the platform does not say (the platform documents 90 days),
   * in seconds. Defaults to `7776000`.
   */
  tokenLifetimeSeconds?: number;
  /**
   * `Retry-After` seconds sent with 503 `platform_unavailable` when the platform sent none (its own
   * figure, capped at 300, is passed on), 1 to 3600. Defaults to `5`.
   */
  retryAfterSeconds?: number;
}

/** The `entry` options of {@link platformLogin}. */
export interface EntryOptions {
  /**
   * Checks that entries come from `platformOrigins` (login CSRF; see docs/entry-trust.md). Defaults
   * to `{ mode: 'enforce' }` with `platformOrigins`, else `{ mode: 'report' }` and a start-up warning;
   * under NODE_ENV=production, no `platformOrigins` refuses the start unless a mode is set here.
   */
  context?: EntryContextOptions;
  /**
   * Failed entries (malformed, used or refused codes) allowed per client address (`req.ip`: set
   * Express's `trust proxy` behind a proxy) per window, counted across processes in the store; then
   * 429 `too_many_entries` before any code is claimed or sent. `0` turns the limit off. Defaults to `20`.
   */
  failureLimit?: number;
  /** The window of `failureLimit`, in seconds (1 to 86400), opened by an address's first failure. Defaults to `600`. */
  failureWindowSeconds?: number;
  /**
   * `failureLimit` counts an IPv6 client by its network of this many bits (as express-rate-limit's
   * `ipv6Subnet`): one customer gets a whole /56 to pick addresses from. 32 to 128. Defaults to `56`.
   */
  ipv6Subnet?: number;
  /**
   * Code exchanges per second, across all processes, that may come from client addresses already
   * counted in their window (a failed entry, or one still under way); past it such an entry gets
   * 429 `too_many_entries` for the rest of the second, before its code is claimed or sent. Addresses
   * with nothing counted are never held by it. Set it to a third of the platform's limit of token
   * calls per second or less (a one-second window lets two budgets through at its edge, and your
   * players' own entries and refreshes need the rest). `0` turns it off. Defaults to `3`.
   */
  failedExchangesPerSecond?: number;
  /**
   * Code exchanges one process may have waiting on the platform; past it an entry is refused with
   * 503 `platform_busy` before its code is claimed. Defaults to `64`.
   */
  maxExchangesInFlight?: number;
  /** Longest accepted `code` parameter, in characters (16 to 4096). Defaults to `512`. */
  maxCodeLength?: number;
  /**
   * How long a redeemed code is remembered so it is never sent twice, in seconds (at least 600).
   * Defaults to `900`.
   */
  codeClaimTtlSeconds?: number;
}

/** The `api` options of {@link platformLogin}. */
export interface ApiOptions {
  /** Base URL of the platform's open API used by `req.platformFetch()`. Defaults to `authUrl`. */
  url?: string;
  /**
   * More open-API bases where the platform has several (payments, social…), by name: a call picks
   * one with `platformFetch('/path', { api: 'payments' })`; an absolute URL may lie under any of
   * them, and the player's token goes nowhere else. `default` is `url`. Defaults to `{}`.
   */
  urls?: Record<string, string>;
  /**
   * Deadline of one open-API call (`platformFetch`, a socket's or a job's `fetch`), headers and
   * body, in milliseconds (1 to 300000); past it the call rejects with 504 `platform_timeout`.
   * Defaults to `10000`.
   */
  timeoutMs?: number;
  /** How the open API is given the access token: `'header'` (Bearer) or `'query'`. Defaults to `'header'`. */
  tokenPlacement?: 'header' | 'query';
  /** Query parameter name when `tokenPlacement` is `'query'`. Defaults to `'access_token'`. */
  tokenQueryParameter?: string;
}

const httpUrl = z
  .string({ error: 'must be an absolute http(s) URL' })
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol));

/** An object; which methods it has is checked when platformLogin() wires it (checkTokenStore). */
const isTokenStore = (value: unknown): value is TokenStore =>
  typeof value === 'object' && value !== null;

const sameSitePath = z
  .string({
    error:
      'must be a path on this site starting with a single "/" (not an absolute or protocol-relative URL)',
  })
  .refine(isSameSitePath);

const number = (error: string) => z.number({ error });
const boolean = z.boolean({ error: 'must be a boolean' });
const client = tokenClientOptionsSchema.shape;

const refreshSchema = z.strictObject({
  skewSeconds: number('must be a number of seconds from 0 to 3600').min(0).max(3600).default(60),
  aheadFraction: number('must be a number above 0 and at most 1').gt(0).max(1).default(0.5),
  failureCooldownSeconds: number('must be a number of seconds from 0 to 300')
    .min(0)
    .max(300)
    .default(5),
  tokenLifetimeSeconds: number('must be a positive integer number of seconds')
    .int()
    .positive()
    .default(90 * 24 * 3600),
  retryAfterSeconds: number('must be an integer number of seconds from 1 to 3600')
    .int()
    .min(1)
    .max(3600)
    .default(5),
});
const _refreshDocumented: SameOptions<RefreshOptions, z.input<typeof refreshSchema>> = true;

const entrySchema = z.strictObject({
  context: entryContextSchema.optional(),
  failureLimit: number('must be an integer from 0 to 1000000')
    .int()
    .min(0)
    .max(1_000_000)
    .default(20),
  failureWindowSeconds: number('must be an integer number of seconds from 1 to 86400')
    .int()
    .min(1)
    .max(86_400)
    .default(600),
  ipv6Subnet: number('must be an integer prefix length from 32 to 128')
    .int()
    .min(32)
    .max(128)
    .default(56),
  failedExchangesPerSecond: number('must be an integer from 0 to 100000')
    .int()
    .min(0)
    .max(100_000)
    .default(3),
  maxExchangesInFlight: number('must be an integer from 1 to 10000')
    .int()
    .min(1)
    .max(10_000)
    .default(64),
  maxCodeLength: number('must be an integer from 16 to 4096').int().min(16).max(4096).default(512),
  codeClaimTtlSeconds: number('must be an integer number of seconds, at least 600')
    .int()
    .min(600)
    .default(900),
});
const _entryDocumented: SameOptions<EntryOptions, z.input<typeof entrySchema>> = true;

const apiSchema = z.strictObject({
  url: httpUrl.optional(),
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
  timeoutMs: number('must be an integer number of milliseconds from 1 to 300000')
    .int()
    .min(1)
    .max(300_000)
    .default(10_000),
  tokenPlacement: z
    .enum(['header', 'query'], { error: "must be 'header' or 'query'" })
    .default('header'),
  tokenQueryParameter: z
    .string({ error: 'must be a non-empty string' })
    .min(1)
    .default('access_token'),
});
const _apiDocumented: SameOptions<ApiOptions, z.input<typeof apiSchema>> = true;

/** The schema of {@link PlatformLoginOptions}; its fields are documented there. */
export const platformLoginSchema = z
  .strictObject({
    authUrl: client.authUrl,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    redirectUri: client.redirectUri,
    store: z
      .custom<TokenStore>(isTokenStore, {
        error: 'must be a TokenStore (MemoryTokenStore, RedisTokenStore or your own)',
      })
      .optional(),
    platformOrigins: originListSchema.optional(),
    gameOrigins: originListSchema.optional(),
    embedded: boolean.default(false),
    successRedirect: sameSitePath.default('/'),
    sessionMaxAgeSeconds: number('must be an integer number of seconds, at least 60')
      .int()
      .min(60)
      .default(86_400),
    handleErrors: boolean.default(true),
    logger: z
      .custom<PlatformLogger>(isPlatformLogger, {
        error: 'must have debug, info, warn and error methods (pino-compatible)',
      })
      .optional(),
    meterProvider: z
      .custom<MeterProvider>(
        (value) => typeof (value as { getMeter?: unknown } | null)?.getMeter === 'function',
        { error: 'must be an OpenTelemetry MeterProvider' },
      )
      .optional(),
    afterLogin: z
      .custom<AfterLoginHook>((value) => typeof value === 'function', {
        error: 'must be a function ({ req, res, player }) => boolean | void (or a promise of it)',
      })
      .optional(),
    tokenClient: tokenClientTuningSchema.prefault({}),
    refresh: refreshSchema.prefault({}),
    entry: entrySchema.prefault({}),
    api: apiSchema.prefault({}),
  })
  .superRefine((config, ctx) => {
    // Options that only make sense together: said at creation, not on the first entry.
    if (config.platformOrigins !== undefined) return;
    const needs = (why: string, example: string) =>
      ctx.addIssue({
        code: 'custom',
        path: ['platformOrigins'],
        message: `is required when ${why}, e.g. ['https://platform.example']${example}`,
      });
    if (config.embedded) {
      needs('`embedded` is true', ': it limits which pages may frame the game (frame-ancestors)');
    }
    // Without origins the entry context defaults to 'report' (with a start-up warning).
    const mode = config.entry.context?.mode;
    if (mode === 'enforce') {
      needs(
        `\`entry.context.mode\` is '${mode}'`,
        ": the origins of the platform's pages that open the game",
      );
    }
  });

/** The flat options of 0.x before the grouping, and where each one went (said when one is given). */
const MOVED: Readonly<Record<string, string>> = {
  refreshSkewSeconds: 'refresh.skewSeconds',
  refreshAheadFraction: 'refresh.aheadFraction',
  refreshFailureCooldownSeconds: 'refresh.failureCooldownSeconds',
  refreshTokenLifetimeSeconds: 'refresh.tokenLifetimeSeconds',
  retryAfterSeconds: 'refresh.retryAfterSeconds',
  entryContext: 'entry.context',
  entryFailureLimit: 'entry.failureLimit',
  entryFailureWindowSeconds: 'entry.failureWindowSeconds',
  entryFailureIpv6Subnet: 'entry.ipv6Subnet',
  maxExchangesInFlight: 'entry.maxExchangesInFlight',
  maxCodeLength: 'entry.maxCodeLength',
  codeClaimTtlSeconds: 'entry.codeClaimTtlSeconds',
  apiUrl: 'api.url',
  apiUrls: 'api.urls',
  apiTimeoutMs: 'api.timeoutMs',
  accessTokenPlacement: 'api.tokenPlacement',
  accessTokenQueryParameter: 'api.tokenQueryParameter',
};

const _documented: SameOptions<PlatformLoginOptions, z.input<typeof platformLoginSchema>> = true;

/** Options after parsing, defaults applied. */
export type PlatformLoginConfig = z.output<typeof platformLoginSchema>;

/** Validates the options of platformLogin() once, at creation. */
export function parsePlatformLoginOptions(options: PlatformLoginOptions): PlatformLoginConfig {
  if (typeof options === 'object' && options !== null) {
    const moved = Object.keys(options).filter((key) => Object.hasOwn(MOVED, key));
    if (moved.length > 0) {
      const where = moved.map((key) => `\`${key}\` moved to \`${MOVED[key]}\``).join('; ');
      throw invalidOption(`platformLogin(): ${where} (see CHANGELOG.md).`, moved[0]);
    }
  }
  return parseOptions(platformLoginSchema, options, 'platformLogin()');
}

const middlewareOptionsSchema = z.strictObject({ optional: boolean.default(false) });
const _middlewareDocumented: SameOptions<
  MiddlewareOptions,
  z.input<typeof middlewareOptionsSchema>
> = true;

/** Validates the options of `login.middleware()`. */
export function parseMiddlewareOptions(
  options: MiddlewareOptions | undefined,
): z.output<typeof middlewareOptionsSchema> {
  return parseOptions(middlewareOptionsSchema, options, 'login.middleware()');
}

const logoutOptionsSchema = z.strictObject({
  redirectTo: sameSitePath.optional(),
  cookieName: z.string({ error: 'must be a non-empty string' }).min(1).default('connect.sid'),
});
const _logoutDocumented: SameOptions<LogoutOptions, z.input<typeof logoutOptionsSchema>> = true;

/** Validates the options of `login.logout()`. */
export function parseLogoutOptions(
  options: LogoutOptions | undefined,
): z.output<typeof logoutOptionsSchema> {
  return parseOptions(logoutOptionsSchema, options, 'login.logout()');
}
