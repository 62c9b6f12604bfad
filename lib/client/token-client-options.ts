// Options of PlatformTokenClient: one strict schema, documented field by field, that parses them once
// at construction (platformLogin() composes the same fields, so both refuse the same values).
import { z } from 'zod';
import { integerOption, parseOptions, type OptionsSchema } from '../util/parse-options';
import { CONTROL_CHARACTERS, isRedirectUri } from '../util/redirect-uri';
import { answerShape } from './answer-styles';

/** What `onAttempt` is told about one token-endpoint attempt. */
export interface TokenAttempt {
  grant: 'authorization_code' | 'refresh_token';
  /** How many times the same request was sent before: 0, or the retry's number. */
  resendCount: number;
  /** `ok`, or the error's code (e.g. `ERR_PLATFORM_TIMEOUT`, `ERR_PLATFORM_INVALID_GRANT`). */
  outcome: string;
  /** When the request was sent (epoch milliseconds): with `durationMs`, the span of the attempt. */
  startedAt: number;
  durationMs: number;
  /** The token endpoint called, without any query (never the parameters, whatever their placement). */
  tokenEndpoint: string;
  /** The HTTP status, when the platform answered at all. */
  httpStatus: number | undefined;
}

/** Accepts an absolute http(s) URL without credentials, query or fragment (a base to append to). */
function isAuthBaseUrl(value: string): boolean {
  if (!URL.canParse(value) || value.includes('?') || value.includes('#')) return false;
  const { protocol, username, password } = new URL(value);
  return /^https?:$/.test(protocol) && username === '' && password === '';
}

/** How the client talks to the token endpoint: every option has a default. */
const tuningShape = {
  /** How the request parameters are encoded in the body. Defaults to `'form'`. */
  bodyEncoding: z.enum(['form', 'json'], { error: "must be 'form' or 'json'" }).default('form'),
  /**
   * Where the refresh request carries its parameters (the platform's token API documents the query
   * string). The query placement puts the refresh token and secret into the URL, where proxies may
   * log it; use it only when the platform requires it. Defaults to `'body'`.
   */
  refreshParameterPlacement: z
    .enum(['body', 'query'], { error: "must be 'body' or 'query'" })
    .default('body'),
  /** Send `client_id`, `client_secret` and `redirect_uri` on refresh too. Defaults to `true`. */
  sendClientCredentialsOnRefresh: z.boolean({ error: 'must be a boolean' }).default(true),
  /**
   * Per-attempt deadline in milliseconds, covering the headers and the whole body; 1 to 300000.
   * Defaults to `5000`.
   */
  timeoutMs: integerOption(1, 300_000, ' number of milliseconds').default(5000),
  /** Largest response body accepted, enforced while streaming, in bytes. Defaults to `65536` (64 KiB). */
  maxResponseBytes: integerOption(1, 16 * 1024 * 1024, ' number of bytes').default(65_536),
  /**
   * A larger `expires_in` is lowered to this. The platform documents a 12-hour access token, so a
   * day leaves room; a bogus huge value would otherwise mean a token that is never refreshed, while
   * a cap that is too low only costs an earlier refresh. Defaults to `86400` (one day).
   */
  maxExpiresInSeconds: integerOption(1, 10 * 365 * 86_400, ' number of seconds').default(86_400),
  /** Retries of a refresh after a transient failure (network, timeout, 5xx, 429); 0 to 5. Defaults to `2`. */
  refreshRetries: integerOption(0, 5, '').default(2),
  /** Base of the exponential backoff with full jitter, in milliseconds. Defaults to `200`. */
  retryBaseDelayMs: integerOption(0, 60_000, ' number of milliseconds').default(200),
  /**
   * Longest wait before a retry, in milliseconds. A `Retry-After` longer than this is not waited
   * for (the refresh fails at once): a player's request is waiting behind it. Defaults to `2000`.
   */
  maxRetryDelayMs: integerOption(0, 60_000, ' number of milliseconds').default(2000),
  /**
   * A fetch to send the token requests and `platformFetch()` through (a proxy's, a test's). By
   * default token requests go over node:http/https (Node's global agents), which costs a third of
   * fetch's CPU, and `platformFetch()` uses `globalThis.fetch`.
   */
  fetch: z
    .custom<typeof fetch>((value) => typeof value === 'function', {
      error: 'must be a fetch-compatible function',
    })
    .optional(),
};

/** The client's tuning options, as platformLogin() takes them under `tokenClient`. */
export const tokenClientTuningSchema: OptionsSchema<typeof tuningShape> =
  z.strictObject(tuningShape);

/**
 * The platform registration's credentials and the style its token endpoint answers in, which
 * platformLogin() takes at its top level.
 */
export const credentialsShape = {
  /**
   * Base URL of the platform's token service: an absolute http(s) URL without credentials, query or
   * fragment; the token endpoint is `${authUrl}/token`. Required.
   */
  authUrl: z
    .string({ error: 'must be an absolute http(s) URL without credentials, query or fragment' })
    .refine(isAuthBaseUrl),
  /** The application's `client_id` on the platform (at most 512 characters). Required. */
  clientId: z
    .string({
      error: 'must be a non-empty string of at most 512 characters without control characters',
    })
    .min(1)
    .max(512)
    .refine((value) => !CONTROL_CHARACTERS.test(value)),
  /** The application's `client_secret`. Kept on the server; never logged, never in an error message. Required. */
  clientSecret: z
    .string({ error: 'must be a non-empty string of at most 4096 characters' })
    .min(1)
    .max(4096),
  /**
   * The `redirect_uri` registered on the platform: an absolute http(s) URL without a fragment,
   * sent byte for byte to the token endpoint. Required.
   */
  redirectUri: z
    .string({
      error: 'must be an absolute http(s) URL without a fragment, at most 2048 characters',
    })
    .max(2048)
    .refine(isRedirectUri),
  ...answerShape,
};

/** What only the client on its own takes. */
const clientOnlyShape = {
  /**
   * Called after every attempt (retries included) with its grant, outcome, start and duration —
   * for metrics, traces, logs and readiness — in the caller's async context (so a tracer sees the
   * caller's active span). Never receives a token. Defaults to none.
   */
  onAttempt: z
    .custom<(attempt: TokenAttempt) => void>((value) => typeof value === 'function', {
      error: 'must be a function',
    })
    .optional(),
};

/** The schema of `new PlatformTokenClient(options)`. */
// Typed as the shapes it joins, so the built types keep each field's TSDoc (see OptionsSchema).
export const tokenClientOptionsSchema: OptionsSchema<
  typeof credentialsShape & typeof tuningShape & typeof clientOnlyShape
> = z.strictObject({ ...credentialsShape, ...tuningShape, ...clientOnlyShape });

/** Options of `new PlatformTokenClient(options)`. */
export type PlatformTokenClientOptions = z.input<typeof tokenClientOptionsSchema>;

/** The parsed options with every default filled in. */
export type TokenClientConfig = z.output<typeof tokenClientOptionsSchema>;

/** Parses and defaults the options; throws a SetupError (`ERR_PLATFORM_INVALID_OPTION`) naming each wrong option. */
export function parseTokenClientOptions(options: unknown): TokenClientConfig {
  return parseOptions(tokenClientOptionsSchema, options, 'PlatformTokenClient');
}
