// The options of platformLogin(), validated once at creation by one strict schema.
import { z } from 'zod';
import type { TokenStore } from './core/token-store';
import { parseOptions } from './util/parse-options';
import { isSameSitePath } from './http/same-site-path';
import { entryContextSchema } from './http/entry-context';
import { originListSchema } from './http/origins';
import { isPlatformLogger, type PlatformLogger } from './observability/logger';
import type { MeterProvider } from '@opentelemetry/api';

const httpUrl = z
  .string()
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
    message: 'must be an absolute http(s) URL',
  });

const isTokenStore = (value: unknown): value is TokenStore =>
  typeof value === 'object' &&
  value !== null &&
  ['get', 'put', 'delete', 'acquireLock', 'releaseLock', 'claimOnce'].every(
    (method) => typeof (value as Record<string, unknown>)[method] === 'function',
  );

const sameSitePath = z.string().refine(isSameSitePath, {
  message:
    'must be a path on this site starting with a single "/" (not an absolute or protocol-relative URL)',
});

/** Options of the token endpoint client that platformLogin() passes through unchanged. */
const tokenClientPassThrough = z
  .object({
    bodyEncoding: z.enum(['form', 'json']).optional(),
    refreshParameterPlacement: z.enum(['body', 'query']).optional(),
    sendClientCredentialsOnRefresh: z.boolean().optional(),
    timeoutMs: z.number().int().positive().optional(),
    maxResponseBytes: z.number().int().positive().optional(),
    refreshRetries: z.number().int().min(0).max(5).optional(),
    retryBaseDelayMs: z.number().int().min(0).max(60_000).optional(),
    maxRetryDelayMs: z.number().int().min(0).max(60_000).optional(),
    maxExpiresInSeconds: z.number().int().positive().optional(),
    fetch: z
      .custom<typeof fetch>((value) => typeof value === 'function', 'must be a fetch function')
      .optional(),
  })
  .strict();

export const platformLoginSchema = z
  .object({
    /** Base URL of the platform's token service; the token endpoint is `${authUrl}/token`. */
    authUrl: httpUrl,
    /** Base URL of the platform's open API used by `req.platformFetch()`. Defaults to `authUrl`. */
    apiUrl: httpUrl.optional(),
    /** The application's client_id on the platform. */
    clientId: z.string().min(1, 'must be a non-empty string'),
    /** The application's client_secret. Kept on the server; never logged. */
    clientSecret: z.string().min(1, 'must be a non-empty string'),
    /** The redirect_uri registered on the platform, sent byte for byte to the token endpoint. */
    redirectUri: httpUrl,
    /** Where token records live. Defaults to a `MemoryTokenStore` (one process only). */
    store: z
      .custom<TokenStore>(
        isTokenStore,
        'must be a TokenStore (MemoryTokenStore, RedisTokenStore or your own)',
      )
      .optional(),
    /** Where a successful entry lands (303). A path on this site. Defaults to `/`. */
    successRedirect: sameSitePath.default('/'),
    /** Refresh before the handler runs when less than this is left of the access token. Defaults to 60. */
    refreshSkewSeconds: z.number().min(0).max(3600).default(60),
    /**
     * Past this fraction of the access token's lifetime, refresh in the background while the request
     * goes on with the current token. `1` turns background refresh off. Defaults to 0.5.
     */
    refreshAheadFraction: z.number().gt(0).max(1).default(0.5),
    /** Lifetime of a refresh token when the platform does not say (the spec states 90 days). Defaults to 7776000. */
    refreshTokenLifetimeSeconds: z
      .number()
      .int()
      .positive()
      .default(90 * 24 * 3600),
    /** Longest accepted `code` parameter, in characters. Defaults to 512. */
    maxCodeLength: z.number().int().min(16).max(4096).default(512),
    /** How long a redeemed code is remembered so it is never sent twice (at least 600). Defaults to 900. */
    codeClaimTtlSeconds: z.number().int().min(600).default(900),
    /** How `req.platformFetch()` presents the access token. Defaults to `'header'` (Bearer). */
    accessTokenPlacement: z.enum(['header', 'query']).default('header'),
    /** Query parameter name when `accessTokenPlacement` is `'query'`. Defaults to `'access_token'`. */
    accessTokenQueryParameter: z.string().min(1).default('access_token'),
    /**
     * After a refresh fails on platform trouble, further refreshes of that login wait this long
     * (requests are served with the current token while it is valid). Defaults to 5.
     */
    refreshFailureCooldownSeconds: z.number().min(0).max(300).default(5),
    /**
     * Lifetime of a session in the session store, in seconds, used when the session cookie has no
     * `maxAge` (connect-redis then keeps sessions for its `ttl`, 86400 by default). A session cookie
     * with `maxAge` wins. Token records and per-player index entries never outlive it; a session
     * kept alive by activity keeps its record. Defaults to 86400.
     */
    sessionMaxAgeSeconds: z.number().int().min(60).default(86_400),
    /**
     * `Retry-After` seconds sent with 503 `platform_unavailable` when the platform sent none (its
     * own figure, capped at 300, is passed on). Defaults to 5.
     */
    retryAfterSeconds: z.number().int().min(1).max(3600).default(5),
    /**
     * `true`: the package answers its errors itself (JSON for API clients, a small HTML page for
     * browsers). `false`: errors go to `next(err)` for the app's error middleware. Defaults to `true`.
     */
    handleErrors: z.boolean().default(true),
    /**
     * A pino-compatible logger (`debug/info/warn/error(fields, message)`). Defaults to the `debug`
     * package: `DEBUG=express-platform-login:*` shows every line.
     */
    logger: z
      .custom<PlatformLogger>(
        isPlatformLogger,
        'must have debug, info, warn and error methods (pino-compatible)',
      )
      .optional(),
    /** OpenTelemetry MeterProvider for the metrics. Defaults to the global one (a no-op until an SDK is registered). */
    meterProvider: z
      .custom<MeterProvider>(
        (value) => typeof (value as { getMeter?: unknown } | null)?.getMeter === 'function',
        'must be an OpenTelemetry MeterProvider',
      )
      .optional(),
    /**
     * Origins of the platform's pages that open or frame the game, e.g. `['https://platform.example']`.
     * Read by `entryContext` and `frameAncestors()`; required by both and by `embedded`. Defaults to none.
     */
    platformOrigins: originListSchema.optional(),
    /** Checks that entries come from `platformOrigins` (see entry-context.ts). Defaults to `{ mode: 'off' }`. */
    entryContext: entryContextSchema.optional(),
    /**
     * The platform shows the game in a cross-site iframe: an entry lands through a cookie check
     * (`?cookie_check=1` on the callback) that shows a diagnostic page when the browser refused the
     * session cookie, and framed entries pass the entry context. Defaults to `false`.
     */
    embedded: z.boolean().default(false),
    /**
     * Origins of the game's own pages on other hosts (a front end on a CDN) allowed to send
     * state-changing requests to `csrfProtection()` routes and `logout()`. Defaults to none: same origin only.
     */
    gameOrigins: originListSchema.optional(),
    /** Extra options of the token endpoint client (encoding, placement, timeouts, fetch). */
    tokenClient: tokenClientPassThrough.optional(),
  })
  .strict();

/** Options of {@link platformLogin}. */
export type PlatformLoginOptions = z.input<typeof platformLoginSchema>;
/** Options after parsing, defaults applied. */
export type PlatformLoginConfig = z.output<typeof platformLoginSchema>;

/** Validates the options once, at creation. */
export function parsePlatformLoginOptions(options: PlatformLoginOptions): PlatformLoginConfig {
  return parseOptions(platformLoginSchema, options, 'platformLogin()');
}
