// Options of PlatformTokenClient: one strict zod schema, parsed once at construction. A wrong or
// unknown option becomes a TypeError that names it and says what is allowed (never its value).
import { z } from 'zod';

/** Characters a client id may not contain: control characters would corrupt the request. */
const CONTROL_CHARACTERS = /\p{Cc}/u;

/** Accepts an absolute http(s) URL without credentials, query or fragment (a base to append to). */
function isAuthBaseUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === '' &&
    !value.includes('?') &&
    !value.includes('#')
  );
}

/** Accepts an absolute http(s) URL without a fragment (RFC 6749 3.1.2); it is sent unchanged. */
function isRedirectUri(value: string): boolean {
  if (!URL.canParse(value) || value.includes('#') || CONTROL_CHARACTERS.test(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}

const integer = (min: number, max: number) => z.number().int().min(min).max(max);

/** The schema of PlatformTokenClient options; `z.input` is the public type, `z.output` the config. */
export const tokenClientOptionsSchema = z.strictObject({
  /** Base URL of the platform's token service; the token endpoint is `${authUrl}/token`. */
  authUrl: z.string().refine(isAuthBaseUrl),
  /** The application's `client_id`. */
  clientId: z
    .string()
    .min(1)
    .max(512)
    .refine((value) => !CONTROL_CHARACTERS.test(value)),
  /** The application's `client_secret`. Never logged, never in an error message. */
  clientSecret: z.string().min(1).max(4096),
  /** The registered callback address, sent byte for byte as configured. */
  redirectUri: z.string().max(2048).refine(isRedirectUri),
  /** How the request parameters are encoded in the body. Defaults to `'form'`. */
  bodyEncoding: z.enum(['form', 'json']).default('form'),
  /**
   * Where the refresh request carries its parameters (spec 4.2 shows the query string). The query
   * placement puts the refresh token and secret into the URL, where proxies may log it; use it only
   * when the platform requires it. Defaults to `'body'`.
   */
  refreshParameterPlacement: z.enum(['body', 'query']).default('body'),
  /** Send `client_id`, `client_secret` and `redirect_uri` on refresh too. Defaults to `true`. */
  sendClientCredentialsOnRefresh: z.boolean().default(true),
  /** Per-attempt deadline in milliseconds, covering the headers and the whole body. Defaults to 5000. */
  timeoutMs: integer(1, 300_000).default(5000),
  /** Largest response body accepted, enforced while streaming. Defaults to 65536 (64 KiB). */
  maxResponseBytes: integer(1, 16 * 1024 * 1024).default(65_536),
  /**
   * A larger `expires_in` is lowered to this. The spec documents a 12-hour access token, so a day
   * leaves room; a bogus huge value would otherwise mean a token that is never refreshed, while a
   * cap that is too low only costs an earlier refresh. Defaults to 86400 (one day).
   */
  maxExpiresInSeconds: integer(1, 10 * 365 * 86_400).default(86_400),
  /** Retries of a refresh after a transient failure (network, timeout, 5xx, 429). Defaults to 2. */
  refreshRetries: integer(0, 5).default(2),
  /** Base of the exponential backoff with full jitter, in milliseconds. Defaults to 200. */
  retryBaseDelayMs: integer(0, 60_000).default(200),
  /**
   * Longest wait before a retry, in milliseconds. A `Retry-After` longer than this is not waited
   * for (the refresh fails at once): a player's request is waiting behind it. Defaults to 2000.
   */
  maxRetryDelayMs: integer(0, 60_000).default(2000),
  /**
   * Called after every attempt (retries included) with its grant, outcome, start and duration —
   * for metrics, traces, logs and readiness — in the caller's async context (so a tracer sees the
   * caller's active span). Never receives a token. Defaults to none.
   */
  onAttempt: z
    .custom<(attempt: TokenAttempt) => void>((value) => typeof value === 'function')
    .optional(),
  /** The fetch implementation to use. Defaults to `globalThis.fetch`. */
  fetch: z
    .custom<typeof fetch>((value) => typeof value === 'function')
    .default(() => globalThis.fetch),
});

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

/** Options accepted by `new PlatformTokenClient(options)`. */
export type PlatformTokenClientOptions = z.input<typeof tokenClientOptionsSchema>;

/** The parsed options with every default filled in. */
export type TokenClientConfig = z.output<typeof tokenClientOptionsSchema>;

type OptionName = keyof PlatformTokenClientOptions;

/** What each option accepts, quoted in the TypeError for a wrong value. */
const ALLOWED: Record<OptionName, string> = {
  authUrl: 'an absolute http(s) URL without credentials, query or fragment',
  clientId: 'a non-empty string of at most 512 characters without control characters',
  clientSecret: 'a non-empty string of at most 4096 characters',
  redirectUri: 'an absolute http(s) URL without a fragment, at most 2048 characters',
  bodyEncoding: "'form' or 'json'",
  refreshParameterPlacement: "'body' or 'query'",
  sendClientCredentialsOnRefresh: 'a boolean',
  timeoutMs: 'an integer number of milliseconds from 1 to 300000',
  maxResponseBytes: 'an integer number of bytes from 1 to 16777216',
  maxExpiresInSeconds: 'an integer number of seconds from 1 to 315360000',
  refreshRetries: 'an integer from 0 to 5',
  retryBaseDelayMs: 'an integer number of milliseconds from 0 to 60000',
  maxRetryDelayMs: 'an integer number of milliseconds from 0 to 60000',
  fetch: 'a fetch-compatible function',
  onAttempt: 'a function',
};

const OPTION_NAMES = Object.keys(ALLOWED) as OptionName[];

/** A known option that looks like the unknown one (`timeout` → `timeoutMs`), for the hint. */
function suggestOption(unknown: string): OptionName | undefined {
  const lower = unknown.toLowerCase();
  return OPTION_NAMES.find((name) => {
    const candidate = name.toLowerCase();
    return candidate === lower || candidate.startsWith(lower) || lower.startsWith(candidate);
  });
}

function describeIssue(issue: z.core.$ZodIssue, options: Record<string, unknown>): string {
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const suggestion = suggestOption(key);
    return (
      `PlatformTokenClient option "${key}" is not known.` +
      (suggestion === undefined ? '' : ` Did you mean "${suggestion}"?`) +
      ` Known options: ${OPTION_NAMES.join(', ')}.`
    );
  }
  const name = issue.path[0];
  if (typeof name === 'string' && name in ALLOWED) {
    const missing = options[name] === undefined ? ' is required and' : '';
    return `PlatformTokenClient option "${name}"${missing} must be ${ALLOWED[name as OptionName]}.`;
  }
  return 'PlatformTokenClient options are invalid.';
}

/** Parses and defaults the options; throws a TypeError naming the first wrong option. */
export function parseTokenClientOptions(options: unknown): TokenClientConfig {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(
      'PlatformTokenClient needs an options object with at least authUrl, clientId, clientSecret and redirectUri.',
    );
  }
  const result = tokenClientOptionsSchema.safeParse(options);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new TypeError(
      issue === undefined
        ? 'PlatformTokenClient options are invalid.'
        : describeIssue(issue, options as Record<string, unknown>),
    );
  }
  return result.data;
}
