// Every error the package raises, in one place. Each class has a stable `code` (for `switch`), the
// HTTP `status` the package answers with, and the `error` string that goes into response bodies.
// Messages are written for the developer reading a log and never contain a secret, a token, a code
// or the platform's raw response body.
import { inspect } from 'node:util';

/** Stable machine-readable codes of every error class, for `switch (err.code)`. */
export const PLATFORM_ERROR_CODES = [
  'ERR_PLATFORM_INVALID_GRANT',
  'ERR_PLATFORM_INVALID_CLIENT',
  'ERR_PLATFORM_REFUSED',
  'ERR_PLATFORM_INVALID_RESPONSE',
  'ERR_PLATFORM_TIMEOUT',
  'ERR_PLATFORM_NETWORK',
  'ERR_PLATFORM_STORE_UNAVAILABLE',
  'ERR_PLATFORM_LOGIN_REQUIRED',
  'ERR_PLATFORM_REAUTH_REQUIRED',
  'ERR_PLATFORM_UNAVAILABLE',
  'ERR_PLATFORM_MISCONFIGURED',
  'ERR_PLATFORM_INVALID_REQUEST',
  'ERR_PLATFORM_CODE_USED',
  'ERR_PLATFORM_ENTRY_DENIED',
  'ERR_PLATFORM_METHOD_NOT_ALLOWED',
  'ERR_PLATFORM_IDENTITY_CHANGED',
  'ERR_PLATFORM_CODE_REJECTED',
  'ERR_PLATFORM_SESSION_MISSING',
  'ERR_PLATFORM_ENTRY_CONTEXT',
  'ERR_PLATFORM_CROSS_ORIGIN',
  'ERR_PLATFORM_COOKIES_REFUSED',
  'ERR_PLATFORM_SETUP',
  'ERR_PLATFORM_INVALID_OPTION',
  'ERR_PLATFORM_TOO_MANY_ENTRIES',
  'ERR_PLATFORM_BUSY',
  'ERR_PLATFORM_API_TIMEOUT',
  'ERR_PLATFORM_API_UNREACHABLE',
  'ERR_PLATFORM_INSUFFICIENT_SCOPE',
  'ERR_PLATFORM_ENTRY_REFUSED',
] as const;

/** Stable machine-readable codes of every error class, for `switch (err.code)`. */
export type PlatformErrorCode = (typeof PLATFORM_ERROR_CODES)[number];

/** The codes a token-endpoint call fails with (the token client's errors, before the failure policy). */
export const TOKEN_ENDPOINT_FAILURE_CODES = [
  'ERR_PLATFORM_INVALID_GRANT',
  'ERR_PLATFORM_INVALID_CLIENT',
  'ERR_PLATFORM_REFUSED',
  'ERR_PLATFORM_INVALID_RESPONSE',
  'ERR_PLATFORM_TIMEOUT',
  'ERR_PLATFORM_NETWORK',
] as const satisfies readonly PlatformErrorCode[];

/** Only these characters survive into a copied platform `error`/`error_description` (RFC 6749 5.2). */
const OAUTH_TEXT = /[^\x20-\x21\x23-\x5b\x5d-\x7e]/g;

/** Bounds and strips text taken from the platform so a log line cannot be flooded or forged. */
function sanitizePlatformText(value: unknown, maxLength = 200): string | undefined {
  if (typeof value !== 'string') return undefined;
  const cleaned = value.replace(OAUTH_TEXT, '').slice(0, maxLength);
  return cleaned.length > 0 ? cleaned : undefined;
}

/** Keeps only the harmless parts of a low-level cause (its name and errno code), never its message. */
function safeCause(cause: unknown): { name: string; code?: string } | undefined {
  if (cause === undefined || cause === null) return undefined;
  if (cause instanceof PlatformLoginError) return { name: cause.name, code: cause.code };
  const name = cause instanceof Error ? cause.name : typeof cause;
  const code =
    typeof (cause as { code?: unknown }).code === 'string'
      ? (cause as { code: string }).code
      : typeof (cause as { cause?: { code?: unknown } }).cause?.code === 'string'
        ? (cause as { cause: { code: string } }).cause.code
        : undefined;
  return code === undefined ? { name } : { name, code };
}

/** Base class of every error this package raises. */
export abstract class PlatformLoginError extends Error {
  /** Stable machine-readable code, e.g. `ERR_PLATFORM_TIMEOUT`. */
  abstract readonly code: PlatformErrorCode;
  /** HTTP status the package answers with when this error ends a request. */
  abstract readonly status: number;
  /** The `error` value of the JSON body sent to API clients, e.g. `login_required`. */
  abstract readonly error: string;

  constructor(message: string, options?: { cause?: unknown }) {
    // The cause is reduced to its name and errno code: a raw cause (a fetch error, a Redis reply)
    // could carry a URL with a token in its query string.
    super(message, options?.cause === undefined ? undefined : { cause: safeCause(options.cause) });
    this.name = new.target.name;
  }

  /** What is safe to show or log: no stack, no secrets. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      status: this.status,
      error: this.error,
      message: this.message,
    };
  }

  [inspect.custom](): string {
    return `${this.name} [${this.code}]: ${this.message}`;
  }
}

/** Said of a 404 or 405 from the token endpoint: nothing answers token requests at that address. */
export const CHECK_AUTH_URL =
  ' Check authUrl (e.g. PLATFORM_AUTH_URL): the token endpoint is `${authUrl}/token`.';

type OAuthErrorCode = 'invalid_grant' | 'invalid_client' | (string & {});

/** The token endpoint answered with an OAuth error (`invalid_grant`, `invalid_client`, …). */
export class TokenEndpointError extends PlatformLoginError {
  readonly code:
    'ERR_PLATFORM_INVALID_GRANT' | 'ERR_PLATFORM_INVALID_CLIENT' | 'ERR_PLATFORM_REFUSED';
  readonly status = 502;
  readonly error = 'platform_error';
  /** The OAuth `error` value (sanitised), e.g. `invalid_grant`. */
  readonly oauthError: OAuthErrorCode;
  /** The OAuth `error_description`, sanitised and at most 200 characters. */
  readonly oauthErrorDescription: string | undefined;
  /** The HTTP status the platform answered with. */
  readonly httpStatus: number;
  /** The platform's `Retry-After`, in whole seconds, when its answer carried one (429, 503). */
  readonly platformRetryAfterSeconds: number | undefined;

  constructor(fields: {
    oauthError: unknown;
    oauthErrorDescription?: unknown;
    httpStatus: number;
    grant: string;
    platformRetryAfterSeconds?: number | undefined;
  }) {
    const oauthError = sanitizePlatformText(fields.oauthError, 64) ?? 'unknown_error';
    // The platform's own words say what was wrong (a redirect_uri mismatch, a wrong secret): kept,
    // sanitised, capped, and already cleared of what the request sent (token-response.ts).
    const description = sanitizePlatformText(fields.oauthErrorDescription, 200);
    super(
      `The token endpoint refused the ${fields.grant} request with "${oauthError}" (HTTP ${fields.httpStatus})` +
        (description === undefined ? '.' : `: "${description}".`) +
        (oauthError === 'invalid_client'
          ? ' Check clientId, clientSecret and redirectUri against the platform registration.'
          : '') +
        // No token endpoint at that address: the base URL is the likely mistake.
        (fields.httpStatus === 404 || fields.httpStatus === 405 ? CHECK_AUTH_URL : ''),
    );
    this.oauthError = oauthError;
    this.oauthErrorDescription = description;
    this.httpStatus = fields.httpStatus;
    this.platformRetryAfterSeconds = fields.platformRetryAfterSeconds;
    this.code =
      oauthError === 'invalid_grant'
        ? 'ERR_PLATFORM_INVALID_GRANT'
        : oauthError === 'invalid_client' || oauthError === 'unauthorized_client'
          ? 'ERR_PLATFORM_INVALID_CLIENT'
          : 'ERR_PLATFORM_REFUSED';
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      oauthError: this.oauthError,
      oauthErrorDescription: this.oauthErrorDescription,
      httpStatus: this.httpStatus,
    };
  }
}

/** The token endpoint answered something that is not a valid token response. */
export class InvalidTokenResponseError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_INVALID_RESPONSE';
  readonly status = 502;
  readonly error = 'platform_error';
  /** The response field that failed validation, when one did. */
  readonly field: string | undefined;
  /** The HTTP status the platform answered with. */
  readonly httpStatus: number | undefined;
  /** The platform's `Retry-After`, in whole seconds, when its answer carried one (429, 503). */
  readonly platformRetryAfterSeconds: number | undefined;

  constructor(
    message: string,
    options?: {
      field?: string;
      httpStatus?: number;
      platformRetryAfterSeconds?: number | undefined;
      cause?: unknown;
    },
  ) {
    super(message, options);
    this.field = options?.field;
    this.httpStatus = options?.httpStatus;
    this.platformRetryAfterSeconds = options?.platformRetryAfterSeconds;
  }
}

/** The token endpoint did not answer (headers and body) within the per-attempt timeout. */
export class TokenEndpointTimeoutError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_TIMEOUT';
  readonly status = 504;
  readonly error = 'platform_timeout';
}

/** The token endpoint could not be reached (connection refused or reset, DNS, TLS). */
export class TokenEndpointNetworkError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_NETWORK';
  readonly status = 502;
  readonly error = 'platform_error';
}

/** The token store (Redis) did not answer in time or failed. Compare-and-set writes keep the stored record consistent whatever happened to the call. */
export class StoreUnavailableError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_STORE_UNAVAILABLE';
  readonly status = 503;
  readonly error = 'store_unavailable';
  readonly retryAfterSeconds = 2;
}

/** The request has no player login (no session, or no token record for it). */
export class LoginRequiredError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_LOGIN_REQUIRED';
  readonly status = 401;
  readonly error = 'login_required';
  constructor(
    message = 'No player is logged in on this session; the player must enter the game from the platform.',
  ) {
    super(message);
  }
}

/**
 * A LoginRequiredError with no stack: a logged-out request or socket is an expected answer whose
 * stack would show only the framework's frames. Saves 18 µs, 4 % of a 401's CPU
 * (bench/micro/cleverness.ts).
 */
export function loginRequiredWithoutStack(): LoginRequiredError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new LoginRequiredError();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * The login ended: the player must enter again (401 `reauth_required`). `code`:
 * `ERR_PLATFORM_REAUTH_REQUIRED` (the platform rejected the refresh token) or
 * `ERR_PLATFORM_IDENTITY_CHANGED` (a refresh returned another player). The record was deleted.
 */
export class ReauthRequiredError extends PlatformLoginError {
  readonly code: 'ERR_PLATFORM_REAUTH_REQUIRED' | 'ERR_PLATFORM_IDENTITY_CHANGED' =
    'ERR_PLATFORM_REAUTH_REQUIRED';
  readonly status = 401;
  readonly error = 'reauth_required';
  constructor(
    message = 'The platform no longer accepts this login; the player must enter the game again.',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The platform is down, slow or broken and the access token has expired. Tokens are kept. */
export class PlatformUnavailableError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_UNAVAILABLE';
  readonly status = 503;
  readonly error = 'platform_unavailable';
  /** Seconds to send in `Retry-After`. */
  readonly retryAfterSeconds: number;
  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds ?? 5;
  }
}

/** The platform rejected our client credentials (`invalid_client`): a configuration problem. */
export class PlatformMisconfiguredError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_MISCONFIGURED';
  readonly status = 503;
  readonly error = 'platform_misconfigured';
}

/**
 * The package refused the request itself, before any platform call or token change: a malformed,
 * used or refused entry, an entry from outside the platform's pages, too many entries, a wrong
 * method, a state change started by another origin. `code` says which (`switch (err.code)`).
 */
export abstract class RequestRefusedError extends PlatformLoginError {
  abstract override readonly code:
    | 'ERR_PLATFORM_INVALID_REQUEST'
    | 'ERR_PLATFORM_CODE_USED'
    | 'ERR_PLATFORM_ENTRY_DENIED'
    | 'ERR_PLATFORM_CODE_REJECTED'
    | 'ERR_PLATFORM_ENTRY_CONTEXT'
    | 'ERR_PLATFORM_COOKIES_REFUSED'
    | 'ERR_PLATFORM_TOO_MANY_ENTRIES'
    | 'ERR_PLATFORM_BUSY'
    | 'ERR_PLATFORM_METHOD_NOT_ALLOWED'
    | 'ERR_PLATFORM_CROSS_ORIGIN';
}

/** The request itself is malformed (e.g. a missing or invalid `code`). */
export class InvalidRequestError extends RequestRefusedError {
  readonly code = 'ERR_PLATFORM_INVALID_REQUEST';
  readonly status = 400;
  readonly error = 'invalid_request';
}

/** The entry carried a code that was already used by another browser. */
export class CodeAlreadyUsedError extends RequestRefusedError {
  readonly code = 'ERR_PLATFORM_CODE_USED';
  readonly status = 400;
  readonly error = 'code_already_used';
  constructor() {
    super(
      'This entry code was already used; the player must enter the game again from the platform.',
    );
  }
}

const ENTRY_ERROR_STATUS: Record<string, number> = {
  access_denied: 403,
  server_error: 502,
  temporarily_unavailable: 503,
};

/** The platform opened the callback with an `error` parameter instead of a code. */
export class EntryDeniedError extends RequestRefusedError {
  readonly code = 'ERR_PLATFORM_ENTRY_DENIED';
  readonly status: number;
  readonly error: string;
  constructor(oauthError: unknown) {
    const error =
      sanitizePlatformText(oauthError, 64)?.replace(/[^a-z0-9_]/gi, '') || 'access_denied';
    super(`The platform sent the player back with error "${error}" instead of a code.`);
    this.error = error;
    // The platform's own trouble (RFC 6749 4.1.2.1) is not the player's mistake.
    this.status = ENTRY_ERROR_STATUS[error] ?? 400;
  }
}

/**
 * The callback answers GET only (link previews and prefetches must not burn a code); logout answers
 * POST only (a GET could be started by any page: an `<img>` would log the player out).
 */
export class MethodNotAllowedError extends RequestRefusedError {
  readonly code = 'ERR_PLATFORM_METHOD_NOT_ALLOWED';
  readonly status = 405;
  readonly error = 'method_not_allowed';
  /** The one method the route accepts, for the `Allow` header. */
  readonly allow: 'GET' | 'POST';
  constructor(allow: 'GET' | 'POST' = 'GET') {
    super(
      allow === 'GET'
        ? 'The platform callback accepts GET only.'
        : 'logout() accepts POST only; mount it with app.post().',
    );
    this.allow = allow;
  }
}

/** A refresh returned another `open_id` than the login's: refused, the player must enter again. */
export class IdentityChangedError extends ReauthRequiredError {
  override readonly code = 'ERR_PLATFORM_IDENTITY_CHANGED';
  constructor() {
    super('A refresh returned another open_id than the login it renewed; the record was deleted.');
  }
}

/** Any error this package raises; `switch (err.code)` narrows it. */
export type AnyPlatformLoginError =
  | TokenEndpointError
  | InvalidTokenResponseError
  | TokenEndpointTimeoutError
  | TokenEndpointNetworkError
  | StoreUnavailableError
  | LoginRequiredError
  | ReauthRequiredError
  | PlatformUnavailableError
  | PlatformMisconfiguredError
  | InvalidRequestError
  | CodeAlreadyUsedError
  | EntryDeniedError
  | MethodNotAllowedError
  | IdentityChangedError
  | CodeRejectedError
  | SessionMissingError
  | EntryContextRefusedError
  | CrossOriginRequestError
  | CookiesRefusedError
  | SetupError
  | TooManyEntriesError
  | PlatformBusyError
  | OpenApiTimeoutError
  | OpenApiUnreachableError
  | InsufficientScopeError
  | EntryRefusedError;

/** True for any error raised by this package. */
export function isPlatformLoginError(value: unknown): value is AnyPlatformLoginError {
  return value instanceof PlatformLoginError;
}

/** The platform refused the entry code at the exchange (`invalid_grant`: expired, unknown or used). */
export class CodeRejectedError extends RequestRefusedError {
  readonly code = 'ERR_PLATFORM_CODE_REJECTED';
  readonly status = 400;
  readonly error = 'code_rejected';
  /** What the platform said of the code (its `error_description`, sanitised, at most 200 characters). */
  readonly platformDescription: string | undefined;
  constructor(options?: { cause?: unknown }) {
    const cause = options?.cause;
    const said = cause instanceof TokenEndpointError ? cause.oauthErrorDescription : undefined;
    super(codeRejectedMessage(said), options);
    this.platformDescription = said;
  }
}

/**
 * The platform's description when it gave one: "expired or already used" is only a guess, and a
 * redirect_uri mismatch (a setup mistake every entry hits) must not read as the player's.
 */
function codeRejectedMessage(said: string | undefined): string {
  if (said === undefined) {
    return 'The platform refused this entry code (expired or already used); the player must enter the game again.';
  }
  const fix = /redirect_uri/i.test(said)
    ? ' Check that `redirectUri` is exactly the redirect_uri the platform sent the player to (scheme, host, port and path).'
    : ' The player must enter the game again.';
  return `The platform refused this entry code: "${said}".${fix}`;
}

/** The codes of {@link SetupError}. */
export type SetupErrorCode =
  'ERR_PLATFORM_INVALID_OPTION' | 'ERR_PLATFORM_SETUP' | 'ERR_PLATFORM_SESSION_MISSING';

/**
 * The setup cannot work; the message names the fix. The one error of every setup refusal:
 * - `ERR_PLATFORM_INVALID_OPTION`: thrown at creation (platformLogin(), a store, the token client,
 *   the simulator, `login.frameAncestors()`): an option is unknown, missing or wrong, or wrong for
 *   this deployment (production); `option` names it.
 * - `ERR_PLATFORM_SETUP`: the setup around the package cannot work (`checkSetup()` at start, or
 *   found on a request, answered 500 `server_misconfigured`).
 * - `ERR_PLATFORM_SESSION_MISSING`: no express-session in front of the package (on a request).
 */
export class SetupError extends PlatformLoginError {
  readonly code: SetupErrorCode;
  readonly status = 500;
  readonly error = 'server_misconfigured';
  /**
   * Path of the first wrong option (`ERR_PLATFORM_INVALID_OPTION`), e.g. `tokenClient.timeoutMs`;
   * `undefined` otherwise, or when the options value as a whole is wrong (not an object). Never the
   * option's value: it may be a secret.
   */
  readonly option: string | undefined;

  constructor(
    message: string,
    options: { code?: SetupErrorCode; option?: string | undefined; cause?: unknown } = {},
  ) {
    super(message, options);
    this.code = options.code ?? 'ERR_PLATFORM_SETUP';
    this.option = options.option;
  }

  /** As every error's, with the option it names (a path, never its value). */
  override toJSON(): Record<string, unknown> {
    const json = super.toJSON();
    return this.option === undefined ? json : { ...json, option: this.option };
  }
}

/** A wrong option, refused at creation: SetupError `ERR_PLATFORM_INVALID_OPTION` naming `option`. */
export function invalidOption(message: string, option?: string): SetupError {
  return new SetupError(message, { code: 'ERR_PLATFORM_INVALID_OPTION', option });
}

/** The package runs without express-session in front of it: a setup mistake, answered 500. */
export class SessionMissingError extends SetupError {
  override readonly code = 'ERR_PLATFORM_SESSION_MISSING';
  constructor() {
    super(
      'express-platform-login needs express-session in front of it: did you forget ' +
        '`app.use(session({ store, secret, resave: false, saveUninitialized: false }))` before mounting the callback and middleware?',
    );
  }
}

/** An entry that did not come from the platform's pages, refused by `entry: { context: { mode: 'enforce' } }`. */
export class EntryContextRefusedError extends RequestRefusedError {
  readonly code = 'ERR_PLATFORM_ENTRY_CONTEXT';
  readonly status = 403;
  readonly error = 'entry_context_refused';
  /** Why the entry was judged foreign (see `entryContextViolation`). */
  readonly reason: string;
  constructor(reason: string) {
    super(
      `An entry was refused before its code was claimed: it did not come from the platform's pages (${reason}). ` +
        'Check `platformOrigins` and `entry.context`; watch `entryContextViolation` events in report mode first.',
    );
    this.reason = reason;
  }
}

/** A state-changing request started by a page of another origin (CSRF), refused by `csrfProtection()`. */
export class CrossOriginRequestError extends RequestRefusedError {
  readonly code = 'ERR_PLATFORM_CROSS_ORIGIN';
  readonly status = 403;
  readonly error = 'cross_origin_refused';
  constructor(what = 'A state-changing request') {
    super(
      `${what} from another origin was refused (Sec-Fetch-Site / Origin). ` +
        'If it came from your own front end on another origin, list that origin in `gameOrigins`.',
    );
  }
}

/** After an entry the browser came back without the new session: it refuses the session cookie. */
export class CookiesRefusedError extends RequestRefusedError {
  readonly code = 'ERR_PLATFORM_COOKIES_REFUSED';
  readonly status = 400;
  readonly error = 'cookies_blocked';
  constructor() {
    super(
      'The browser came back from an entry without the session cookie: it refuses it (third-party cookies ' +
        'blocked, or a cookie without SameSite=None; Secure; Partitioned inside an iframe — see embeddedSessionCookie()).',
    );
  }
}

/**
 * Too many failed entries (bad, used or refused codes) came from this client address: refused with
 * 429 before any code is claimed or sent, until the window ends (`entry.failureLimit`).
 */
export class TooManyEntriesError extends RequestRefusedError {
  readonly code = 'ERR_PLATFORM_TOO_MANY_ENTRIES';
  readonly status = 429;
  readonly error = 'too_many_entries';
  /** Seconds to send in `Retry-After`: until the address's window ends. */
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(
      'An entry was refused before its code was claimed: its client address has too many failed entries in the current window ' +
        "(`entry.failureLimit`). Behind a proxy, check `trust proxy`: without it every player shares the proxy's address.",
    );
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The entry is refused with 503 before its code is claimed: this process already has
 * `entry.maxExchangesInFlight` code exchanges waiting on the platform (a flood cannot open unbounded
 * outbound requests), or the platform asked for no exchange until its `Retry-After` has passed.
 */
export class PlatformBusyError extends RequestRefusedError {
  readonly code = 'ERR_PLATFORM_BUSY';
  readonly status = 503;
  readonly error = 'platform_busy';
  /** Seconds to send in `Retry-After`: 1 for the cap, what is left of the platform's figure for its hold. */
  readonly retryAfterSeconds: number;
  constructor(options?: { platformRetryAfterSeconds?: number; cause?: unknown }) {
    const held = options?.platformRetryAfterSeconds;
    super(
      held === undefined
        ? 'An entry was refused before its code was claimed: too many code exchanges are in flight on this process (`entry.maxExchangesInFlight`).'
        : `The token endpoint asked (Retry-After) for no code exchange for ${held} seconds; until then entries are refused before their code is claimed.`,
      options,
    );
    this.retryAfterSeconds = held ?? 1;
  }
}

/**
 * The open API (`platformFetch`, a socket's or a job's `fetch`) did not answer, headers and body,
 * within `openApi.timeoutMs`. Its answer, when it came, is not the package's to judge: a 4xx/5xx
 * of the open API is returned to the caller as a Response.
 */
export class OpenApiTimeoutError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_API_TIMEOUT';
  readonly status = 504;
  readonly error = 'platform_timeout';
}

/** The open API could not be reached, or its connection broke mid-answer (refused, reset, DNS, TLS). */
export class OpenApiUnreachableError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_API_UNREACHABLE';
  readonly status = 502;
  readonly error = 'platform_error';
}

/** The player did not grant a scope this route needs (`login.requireScopes()`). */
export class InsufficientScopeError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_INSUFFICIENT_SCOPE';
  readonly status = 403;
  readonly error = 'insufficient_scope';
  /** The scopes the route needs that the player's login lacks. */
  readonly missingScopes: readonly string[];
  constructor(missingScopes: readonly string[]) {
    super(
      `The player's login lacks the scope(s) this route needs: ${missingScopes.join(', ')}. ` +
        'The player must grant them on the platform and enter again.',
    );
    this.missingScopes = missingScopes;
  }
}

/**
 * The app's `afterLogin` hook refused an entry: no login was kept (token record deleted, session
 * without a login), answered 403 `entry_refused`.
 */
export class EntryRefusedError extends PlatformLoginError {
  readonly code = 'ERR_PLATFORM_ENTRY_REFUSED';
  readonly status = 403;
  readonly error = 'entry_refused';
  constructor(options?: { cause?: unknown }) {
    super('The afterLogin hook refused this entry; no login was kept.', options);
  }
}
