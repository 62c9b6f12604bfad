// Every error the package raises, from one table (PLATFORM_ERRORS) that every list of codes is
// derived from: each code's status, body `error`, family (its class), log level, lists and message.
// Messages are for the developer reading a log: never a secret, a token, a code or a raw platform body.
import { inspect } from 'node:util';

/** What the caller does next, one class each. */
type Family = 'setup' | 'login' | 'refused' | 'platform' | 'store';

/** The level of the log line of a request that a code ends (observability/event-logging.ts). */
export type LogLevel = 'debug' | 'warn' | 'error';

/**
 * The lists a code belongs to: `token`, what a token-endpoint call fails with (the token
 * client's errors, before the failure policy); `oauth`, an OAuth error the endpoint answered
 * (carries `oauthError`); `refresh`, what a refresh fails with; `entry`, what an entry is refused or
 * fails with; `holds`, platform trouble worth holding every process's refreshes back for.
 */
type Group = 'token' | 'oauth' | 'refresh' | 'entry' | 'holds';

interface ErrorRow {
  status: number;
  error: string;
  family: Family;
  /** `warn` a setup mistake, `error` a 5xx, `debug` a player's mistake or one said once where found. */
  level: LogLevel;
  groups: readonly Group[];
  /** The code's own message (a template where it names a value); absent where each site says its own. */
  message?: string | ((args: never) => string);
}

/** A row's status, body `error`, family, log level and groups (its message, if any, beside). */
const meta = <const F extends Family, const G extends readonly Group[]>(
  status: number,
  error: string,
  family: F,
  level: LogLevel,
  groups: G,
) => ({ status, error, family, level, groups });

/** An OAuth error the token endpoint answered, said with the platform's own (sanitised) words. */
const refusedMessage = (a: {
  grant: string;
  oauthError: string;
  httpStatus: number;
  description: string | undefined;
  tokenEndpoint: string | undefined;
}): string =>
  `The token endpoint refused the ${a.grant} request with "${a.oauthError}" (HTTP ${a.httpStatus})` +
  (a.description === undefined ? '.' : `: "${a.description}".`) +
  (a.oauthError === 'invalid_client'
    ? ' Check clientId, clientSecret and redirectUri against the platform registration.'
    : '') +
  authUrlHint(a.httpStatus, a.tokenEndpoint);

/**
 * Every code, once. `ERR_PLATFORM_ENTRY_DENIED` is answered with the platform's own `error` (see
 * {@link httpAnswer}); its row holds the answer when the platform's says nothing usable.
 */
export const PLATFORM_ERRORS = {
  ERR_PLATFORM_INVALID_GRANT: {
    ...meta(502, 'platform_error', 'platform', 'error', ['token', 'oauth']),
    message: refusedMessage,
  },
  ERR_PLATFORM_INVALID_CLIENT: {
    ...meta(502, 'platform_error', 'platform', 'error', ['token', 'oauth']),
    message: refusedMessage,
  },
  ERR_PLATFORM_REFUSED: {
    ...meta(502, 'platform_error', 'platform', 'error', ['token', 'oauth', 'entry']),
    message: refusedMessage,
  },
  ERR_PLATFORM_INVALID_RESPONSE: meta(502, 'platform_error', 'platform', 'error', [
    'token',
    'entry',
  ]),
  ERR_PLATFORM_TIMEOUT: {
    ...meta(504, 'platform_timeout', 'platform', 'error', ['token', 'entry']),
    message: (a: { tokenEndpoint: string; grant: string; timeoutMs: number }) =>
      `The token endpoint ${a.tokenEndpoint} did not answer the ${a.grant} request within ${a.timeoutMs} ms (timeoutMs).`,
  },
  ERR_PLATFORM_NETWORK: {
    ...meta(502, 'platform_error', 'platform', 'error', ['token', 'entry']),
    message: (a: { tokenEndpoint: string; grant: string }) =>
      `The token endpoint ${a.tokenEndpoint} could not be reached for the ${a.grant} request, or dropped the connection. Check authUrl and the network.`,
  },
  ERR_PLATFORM_STORE_UNAVAILABLE: {
    ...meta(503, 'store_unavailable', 'store', 'error', ['refresh', 'entry']),
    message: (a: { store: string; what: string; timeoutMs?: number; clientClosed?: boolean }) =>
      a.timeoutMs !== undefined
        ? `The ${a.store} did not answer ${a.what} within ${a.timeoutMs} ms; check that it is reachable.`
        : a.clientClosed === true
          ? `The ${a.store} failed ${a.what}: its Redis client is closed (node-redis sends nothing before \`await client.connect()\`, nor after \`close()\`).`
          : `The ${a.store} failed ${a.what}; check that it is reachable.`,
  },
  ERR_PLATFORM_LOGIN_REQUIRED: {
    ...meta(401, 'login_required', 'login', 'debug', ['entry']),
    message:
      'No player is logged in on this session; the player must enter the game from the platform.',
  },
  ERR_PLATFORM_REAUTH_REQUIRED: {
    ...meta(401, 'reauth_required', 'login', 'debug', ['refresh']),
    message: 'The platform no longer accepts this login; the player must enter the game again.',
  },
  ERR_PLATFORM_UNAVAILABLE: meta(503, 'platform_unavailable', 'platform', 'error', [
    'refresh',
    'holds',
  ]),
  ERR_PLATFORM_MISCONFIGURED: {
    ...meta(503, 'platform_misconfigured', 'platform', 'warn', ['refresh', 'entry', 'holds']),
    message: (a: { grant: string }) =>
      a.grant === 'authorization_code'
        ? 'The platform rejected our client credentials at the code exchange; check clientId, clientSecret and redirectUri.'
        : 'The platform rejected our client credentials while refreshing; check clientId and clientSecret. The tokens were kept.',
  },
  ERR_PLATFORM_INVALID_REQUEST: meta(400, 'invalid_request', 'refused', 'debug', ['entry']),
  ERR_PLATFORM_CODE_USED: {
    ...meta(400, 'code_already_used', 'refused', 'debug', ['entry']),
    message:
      'This entry code was already used; the player must enter the game again from the platform.',
  },
  ERR_PLATFORM_ENTRY_DENIED: {
    ...meta(403, 'access_denied', 'refused', 'debug', ['entry']),
    message: (error: string) =>
      `The platform sent the player back with error "${error}" instead of a code.`,
  },
  ERR_PLATFORM_METHOD_NOT_ALLOWED: {
    ...meta(405, 'method_not_allowed', 'refused', 'debug', ['entry']),
    message: (allow: 'GET' | 'POST') =>
      allow === 'GET'
        ? 'The platform callback accepts GET only.'
        : 'logout() accepts POST only; mount it with app.post().',
  },
  ERR_PLATFORM_IDENTITY_CHANGED: {
    ...meta(401, 'reauth_required', 'login', 'debug', ['refresh']),
    message:
      'A refresh returned another open_id than the login it renewed; the record was deleted.',
  },
  ERR_PLATFORM_CODE_REJECTED: {
    ...meta(400, 'code_rejected', 'refused', 'debug', ['entry']),
    message: (said: string | undefined) =>
      said === undefined
        ? 'The platform refused this entry code (expired or already used); the player must enter the game again.'
        : `The platform refused this entry code: "${said}".` +
          // A redirect_uri mismatch (a setup mistake every entry hits) must not read as the player's.
          (REDIRECT_URI.test(said)
            ? ' Check that `redirectUri` is exactly the redirect_uri the platform sent the player to (scheme, host, port and path).'
            : ' The player must enter the game again.'),
  },
  ERR_PLATFORM_SESSION_MISSING: {
    ...meta(500, 'server_misconfigured', 'setup', 'debug', ['entry']),
    message:
      'express-platform-login needs express-session in front of it: did you forget ' +
      '`app.use(session({ store, secret, resave: false, saveUninitialized: false }))` before mounting the callback and middleware?',
  },
  ERR_PLATFORM_ENTRY_CONTEXT: {
    ...meta(403, 'entry_context_refused', 'refused', 'warn', ['entry']),
    message: (reason: string) =>
      `An entry was refused before its code was claimed: it did not come from the platform's pages (${reason}). ` +
      'Check `platformOrigins` and `entry.context`; watch `entryContextViolation` events in report mode first.',
  },
  ERR_PLATFORM_CROSS_ORIGIN: {
    ...meta(403, 'cross_origin_refused', 'refused', 'debug', []),
    message: (what: string) =>
      `${what} from another origin was refused (Sec-Fetch-Site / Origin). ` +
      'If it came from your own front end on another origin, list that origin in `gameOrigins`.',
  },
  ERR_PLATFORM_COOKIES_REFUSED: {
    ...meta(400, 'cookies_blocked', 'refused', 'debug', ['entry']),
    message:
      'The browser came back from an entry without the session cookie: it refuses it (third-party cookies ' +
      'blocked, or a cookie without SameSite=None; Secure; Partitioned inside an iframe — see embeddedSessionCookie()).',
  },
  ERR_PLATFORM_SETUP: meta(500, 'server_misconfigured', 'setup', 'debug', []),
  ERR_PLATFORM_INVALID_OPTION: meta(500, 'server_misconfigured', 'setup', 'warn', []),
  ERR_PLATFORM_TOO_MANY_ENTRIES: {
    ...meta(429, 'too_many_entries', 'refused', 'debug', ['entry']),
    message:
      'An entry was refused before its code was claimed: its client address has too many failed entries in the current window ' +
      "(`entry.failureLimit`). Behind a proxy, check `trust proxy`: without it every player shares the proxy's address.",
  },
  ERR_PLATFORM_BUSY: {
    ...meta(503, 'platform_busy', 'refused', 'error', ['entry']),
    message: (heldSeconds: number | undefined) =>
      heldSeconds === undefined
        ? 'An entry was refused before its code was claimed: too many code exchanges are in flight on this process (`entry.maxExchangesInFlight`).'
        : `The token endpoint asked (Retry-After) for no code exchange for ${heldSeconds} seconds; until then entries are refused before their code is claimed.`,
  },
  ERR_PLATFORM_API_TIMEOUT: {
    ...meta(504, 'platform_timeout', 'platform', 'error', []),
    message: (a: { timeoutMs: number; where: string }) =>
      `The open API did not answer within ${a.timeoutMs} ms (${a.where}).`,
  },
  ERR_PLATFORM_API_UNREACHABLE: {
    ...meta(502, 'platform_error', 'platform', 'error', []),
    message: (where: string) => `The open API could not be reached (${where}).`,
  },
  ERR_PLATFORM_INSUFFICIENT_SCOPE: {
    ...meta(403, 'insufficient_scope', 'refused', 'debug', []),
    message: (missing: readonly string[]) =>
      `The player's login lacks the scope(s) this route needs: ${missing.join(', ')}. ` +
      'The player must grant them on the platform and enter again.',
  },
  ERR_PLATFORM_ENTRY_REFUSED: {
    ...meta(403, 'entry_refused', 'refused', 'debug', []),
    message: 'The afterLogin hook refused this entry; no login was kept.',
  },
} satisfies Record<string, ErrorRow>;

/** Stable machine-readable codes of every error, for `switch (err.code)`. */
export type PlatformErrorCode = keyof typeof PLATFORM_ERRORS;

/** Every code, in the table's order. */
export const PLATFORM_ERROR_CODES = Object.keys(PLATFORM_ERRORS) as readonly PlatformErrorCode[];

type Rows = typeof PLATFORM_ERRORS;

/** The codes whose row is a `T`. */
type CodesWhere<T> = { [C in PlatformErrorCode]: Rows[C] extends T ? C : never }[PlatformErrorCode];
/** The codes of one family (one class). */
type CodeOf<F extends Family> = CodesWhere<{ family: F }>;

/** The codes of one group. */
type GroupCode<G extends Group> = {
  [C in PlatformErrorCode]: G extends Rows[C]['groups'][number] ? C : never;
}[PlatformErrorCode];

/** The codes of `group`, in the table's order. */
export const codesOf = <G extends Group>(group: G): readonly GroupCode<G>[] =>
  PLATFORM_ERROR_CODES.filter((code) =>
    (PLATFORM_ERRORS[code].groups as readonly Group[]).includes(group),
  ) as GroupCode<G>[];

/** What a code's message is made from: nothing for a fixed message, the template's argument else. */
type MessageArgs<C extends PlatformErrorCode> = Rows[C] extends {
  message: (args: infer A) => string;
}
  ? [A]
  : [];
/** The codes whose message is the table's. */
type WithMessage = CodesWhere<{ message: unknown }>;

/** The message of `code`, made from `args` when it is a template. */
function messageOf<C extends WithMessage>(code: C, ...args: MessageArgs<C>): string {
  const message = (PLATFORM_ERRORS[code] as ErrorRow).message as
    string | ((args: unknown) => string);
  return typeof message === 'string' ? message : message(args[0]);
}

/** The codes of an OAuth error answered by the token endpoint (they carry `oauthError`). */
const OAUTH_REFUSAL_CODES: ReadonlySet<PlatformErrorCode> = new Set(codesOf('oauth'));

/** A platform description naming the redirect_uri: our setup, not the player's code. */
const REDIRECT_URI = /redirect_uri/i;

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
  const { code, cause: inner } = cause as { code?: unknown; cause?: { code?: unknown } };
  const errno = typeof code === 'string' ? code : inner?.code;
  return typeof errno === 'string' ? { name, code: errno } : { name };
}

/** The platform's `?error=` values answered with their own status at an entry (RFC 6749 4.1.2.1). */
const ENTRY_ERROR_STATUS: Record<string, number> = {
  access_denied: 403,
  server_error: 502,
  temporarily_unavailable: 503,
};

/**
 * The HTTP answer for a package error: its code's row of {@link PLATFORM_ERRORS}, except an entry
 * the platform denied, answered with the platform's own `error` (its trouble, 502/503, is not the
 * player's mistake; any other value is 400).
 */
export function httpAnswer(err: { code: PlatformErrorCode; platformError?: string | undefined }) {
  if (err.code === 'ERR_PLATFORM_ENTRY_DENIED' && err.platformError !== undefined) {
    return { status: ENTRY_ERROR_STATUS[err.platformError] ?? 400, error: err.platformError };
  }
  const { status, error } = PLATFORM_ERRORS[err.code];
  return { status, error };
}

/** Sets on `error` each of `fields` that is defined (an absent field stays absent, not `undefined`). */
function assignDefined(error: object, fields: object): void {
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) (error as Record<string, unknown>)[name] = value;
  }
}

/** Base class of every error this package raises; `code` says which, the table says the rest. */
export abstract class PlatformLoginError<
  C extends PlatformErrorCode = PlatformErrorCode,
> extends Error {
  /** Stable machine-readable code, e.g. `ERR_PLATFORM_TIMEOUT`. */
  readonly code: C;
  /** The level the package logs a request this error ends at: its code's, unless this case is another's. */
  readonly logLevel: LogLevel;

  constructor(code: C, message: string, options?: { cause?: unknown; level?: LogLevel }) {
    // The cause is reduced to its name and errno code: a raw cause (a fetch error, a Redis reply)
    // could carry a URL with a token in its query string.
    super(message, options?.cause === undefined ? undefined : { cause: safeCause(options.cause) });
    this.name = new.target.name;
    this.code = code;
    this.logLevel = options?.level ?? PLATFORM_ERRORS[code].level;
  }

  /** HTTP status the package answers with when this error ends a request. */
  get status(): number {
    return httpAnswer(this).status;
  }

  /** The `error` value of the JSON body sent to API clients, e.g. `login_required`. */
  get error(): string {
    return httpAnswer(this).error;
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

/**
 * The setup cannot work: fix the configuration; the message names the fix. A wrong option at
 * creation (`ERR_PLATFORM_INVALID_OPTION`, `option` names it), the setup around the package
 * (`ERR_PLATFORM_SETUP`), no express-session (`ERR_PLATFORM_SESSION_MISSING`): docs/errors.md.
 */
export class SetupError extends PlatformLoginError<CodeOf<'setup'>> {
  /**
   * Path of the first wrong option (`ERR_PLATFORM_INVALID_OPTION`), e.g. `tokenClient.timeoutMs`;
   * `undefined` otherwise, or when the options value as a whole is wrong (not an object). Never the
   * option's value: it may be a secret.
   */
  readonly option: string | undefined;

  constructor(
    message: string,
    options: { code?: CodeOf<'setup'>; option?: string | undefined; cause?: unknown } = {},
  ) {
    super(options.code ?? 'ERR_PLATFORM_SETUP', message, options);
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
export const sessionMissing = (): SetupError =>
  new SetupError(messageOf('ERR_PLATFORM_SESSION_MISSING'), {
    code: 'ERR_PLATFORM_SESSION_MISSING',
  });

/**
 * The player must enter the game again (401): `ERR_PLATFORM_LOGIN_REQUIRED` (no session, or no
 * token record for it: `login_required`), `ERR_PLATFORM_REAUTH_REQUIRED` (the platform rejected the
 * refresh token) or `ERR_PLATFORM_IDENTITY_CHANGED` (a refresh returned another player); on the
 * last two the record was deleted (`reauth_required`).
 */
export class LoginRequiredError extends PlatformLoginError<CodeOf<'login'>> {
  constructor(message?: string, options: { code?: CodeOf<'login'>; cause?: unknown } = {}) {
    const code = options.code ?? 'ERR_PLATFORM_LOGIN_REQUIRED';
    super(code, message ?? messageOf(code), options);
  }
}

/** The login ended: the platform no longer accepts it (`reauth_required`). */
export const reauthRequired = (options?: { cause?: unknown }): LoginRequiredError =>
  new LoginRequiredError(undefined, { ...options, code: 'ERR_PLATFORM_REAUTH_REQUIRED' });

/** A refresh returned another `open_id` than the login's: refused, the player must enter again. */
export const identityChanged = (): LoginRequiredError =>
  new LoginRequiredError(undefined, { code: 'ERR_PLATFORM_IDENTITY_CHANGED' });

/**
 * This request is refused as sent, before any token change: a malformed, used or refused entry, an
 * entry from outside the platform's pages, too many entries, a busy platform, a wrong method, a
 * state change started by another origin, a scope the player did not grant, an entry the app's
 * `afterLogin` hook refused. `code` says which (`switch (err.code)`).
 */
export class RequestRefusedError extends PlatformLoginError<CodeOf<'refused'>> {
  /** Seconds to send in `Retry-After` (`ERR_PLATFORM_TOO_MANY_ENTRIES`, `ERR_PLATFORM_BUSY`). */
  declare readonly retryAfterSeconds?: number;
  /** The one method the route accepts, for the `Allow` header (`ERR_PLATFORM_METHOD_NOT_ALLOWED`). */
  declare readonly allow?: 'GET' | 'POST';
  /** Why the entry was judged foreign (`ERR_PLATFORM_ENTRY_CONTEXT`; see `entryContextViolation`). */
  declare readonly reason?: string;
  /** The platform's `?error=` at the callback, sanitised (`ERR_PLATFORM_ENTRY_DENIED`). */
  declare readonly platformError?: string;
  /** The scopes the route needs that the player's login lacks (`ERR_PLATFORM_INSUFFICIENT_SCOPE`). */
  declare readonly missingScopes?: readonly string[];

  constructor(
    message: string,
    options: RefusalFields & { code: CodeOf<'refused'>; cause?: unknown; level?: LogLevel },
  ) {
    const { code, cause: _cause, level: _level, ...fields } = options;
    super(code, message, options);
    assignDefined(this, fields);
  }
}

/** What a refusal carries beside its code. */
type RefusalFields = Partial<Omit<RequestRefusedError, keyof PlatformLoginError>>;

/** A refusal with its code's message (made from `args`) and the `fields` it carries. */
const refused = <C extends CodeOf<'refused'> & WithMessage>(
  code: C,
  args: MessageArgs<C>,
  fields?: RefusalFields & { cause?: unknown; level?: LogLevel },
) => new RequestRefusedError(messageOf(code, ...args), { ...fields, code });

/** The request itself is malformed (e.g. a missing or invalid `code`). */
export const invalidRequest = (message: string): RequestRefusedError =>
  new RequestRefusedError(message, { code: 'ERR_PLATFORM_INVALID_REQUEST' });

/** The entry carried a code that was already used by another browser. */
export const codeAlreadyUsed = () => refused('ERR_PLATFORM_CODE_USED', []);

/** The platform opened the callback with an `error` parameter instead of a code. */
export function entryDenied(oauthError: unknown): RequestRefusedError {
  const error =
    sanitizePlatformText(oauthError, 64)?.replace(/[^a-z0-9_]/gi, '') || 'access_denied';
  // The platform's own trouble (502, 503) is logged as every 5xx is.
  const trouble =
    httpAnswer({ code: 'ERR_PLATFORM_ENTRY_DENIED', platformError: error }).status >= 500;
  return refused('ERR_PLATFORM_ENTRY_DENIED', [error], {
    platformError: error,
    ...(trouble && { level: 'error' as const }),
  });
}

/** The one method the route answers: GET for the callback, POST for logout (each says why). */
export const methodNotAllowed = (allow: 'GET' | 'POST' = 'GET') =>
  refused('ERR_PLATFORM_METHOD_NOT_ALLOWED', [allow], { allow });

/** The platform refused the entry code at the exchange (`invalid_grant`: expired, unknown or used). */
export function codeRejected(options?: { cause?: unknown }): RequestRefusedError {
  const cause = options?.cause as { oauthErrorDescription?: unknown } | undefined;
  const said =
    typeof cause?.oauthErrorDescription === 'string' ? cause.oauthErrorDescription : undefined;
  // The platform's description when it gave one ("expired or already used" is only a guess); a
  // redirect_uri mismatch is the setup's mistake, logged as one.
  return refused('ERR_PLATFORM_CODE_REJECTED', [said], {
    ...options,
    ...(said !== undefined && REDIRECT_URI.test(said) && { level: 'warn' as const }),
  });
}

/** An entry that did not come from the platform's pages, refused by `entry: { context: { mode: 'enforce' } }`. */
export const entryContextRefused = (reason: string, detail = reason) =>
  refused('ERR_PLATFORM_ENTRY_CONTEXT', [detail], { reason });

/** A state-changing request started by a page of another origin (CSRF), refused by `csrfProtection()`. */
export const crossOriginRequest = (what = 'A state-changing request') =>
  refused('ERR_PLATFORM_CROSS_ORIGIN', [what]);

/** After an entry the browser came back without the new session: it refuses the session cookie. */
export const cookiesRefused = () => refused('ERR_PLATFORM_COOKIES_REFUSED', []);

/** Too many failed entries came from this client address (`entry.failureLimit`). */
export const tooManyEntries = (retryAfterSeconds: number) =>
  refused('ERR_PLATFORM_TOO_MANY_ENTRIES', [], { retryAfterSeconds });

/**
 * Too many code exchanges in flight on this process (`Retry-After: 1`), or the platform's hold (what
 * is left of its `Retry-After`): the entry is refused before its code is claimed.
 */
export const platformBusy = (options?: { platformRetryAfterSeconds?: number; cause?: unknown }) =>
  refused('ERR_PLATFORM_BUSY', [options?.platformRetryAfterSeconds], {
    cause: options?.cause,
    retryAfterSeconds: options?.platformRetryAfterSeconds ?? 1,
  });

/** The player did not grant a scope this route needs (`login.requireScopes()`). */
export const insufficientScope = (missingScopes: readonly string[]) =>
  refused('ERR_PLATFORM_INSUFFICIENT_SCOPE', [missingScopes], { missingScopes });

/** The app's `afterLogin` hook refused an entry: no login was kept. */
export const entryRefused = (options?: { cause?: unknown }) =>
  refused('ERR_PLATFORM_ENTRY_REFUSED', [], options);

type OAuthErrorCode = 'invalid_grant' | 'invalid_client' | (string & {});

/**
 * The platform failed or answered wrongly: its token endpoint (an OAuth error `INVALID_GRANT`,
 * `INVALID_CLIENT`, `REFUSED`; an invalid response `INVALID_RESPONSE`; `TIMEOUT`; `NETWORK`), a
 * refresh it could not serve (`UNAVAILABLE`, tokens kept; `MISCONFIGURED`, our client credentials),
 * or its open API (`API_TIMEOUT`, `API_UNREACHABLE`).
 */
export class PlatformError extends PlatformLoginError<CodeOf<'platform'>> {
  /** The OAuth `error` value (sanitised), e.g. `invalid_grant` (an OAuth error's codes). */
  declare readonly oauthError?: OAuthErrorCode;
  /** The OAuth `error_description`, sanitised and at most 200 characters (an OAuth error's codes). */
  declare readonly oauthErrorDescription?: string | undefined;
  /** The HTTP status the token endpoint answered with (an OAuth error, an invalid response). */
  declare readonly httpStatus?: number | undefined;
  /** The platform's `Retry-After`, in whole seconds, when its token endpoint's answer carried one (429, 503). */
  declare readonly platformRetryAfterSeconds?: number | undefined;
  /** The response field that failed validation, when one did (`ERR_PLATFORM_INVALID_RESPONSE`). */
  declare readonly field?: string | undefined;
  /** Seconds to send in `Retry-After` (`ERR_PLATFORM_UNAVAILABLE`). */
  declare readonly retryAfterSeconds?: number;

  constructor(
    message: string,
    options: PlatformFields & { code: CodeOf<'platform'>; cause?: unknown },
  ) {
    const { code, cause: _cause, ...fields } = options;
    super(code, message, options);
    assignDefined(this, {
      ...fields,
      ...(OAUTH_REFUSAL_CODES.has(code) && { oauthError: fields.oauthError ?? 'unknown_error' }),
      ...(code === 'ERR_PLATFORM_UNAVAILABLE' && {
        retryAfterSeconds: fields.retryAfterSeconds ?? 5,
      }),
    });
  }

  override toJSON(): Record<string, unknown> {
    if (!OAUTH_REFUSAL_CODES.has(this.code)) return super.toJSON();
    const { oauthError, oauthErrorDescription, httpStatus } = this;
    return { ...super.toJSON(), oauthError, oauthErrorDescription, httpStatus };
  }
}

/** What a platform failure carries beside its code. */
type PlatformFields = Partial<Omit<PlatformError, keyof PlatformLoginError>>;

/** A platform failure with its code's message (made from `args`) and the `fields` it carries. */
const failed = <C extends CodeOf<'platform'> & WithMessage>(
  code: C,
  args: MessageArgs<C>,
  fields?: PlatformFields & { cause?: unknown },
) => new PlatformError(messageOf(code, ...args), { ...fields, code });

/**
 * Said of a 404 or 405 from the token endpoint: nothing answers token requests at that address,
 * named (authUrl holds no credentials) so that a doubled `/token` shows at a glance.
 */
export const authUrlHint = (httpStatus: number, tokenEndpoint = '`${authUrl}/token`'): string =>
  httpStatus === 404 || httpStatus === 405
    ? ` Check authUrl (e.g. PLATFORM_AUTH_URL): the token endpoint asked, ${tokenEndpoint}, is authUrl followed by /token.`
    : '';

/** The token endpoint answered with an OAuth error (`invalid_grant`, `invalid_client`, …). */
export function tokenEndpointRefused(fields: {
  oauthError: unknown;
  oauthErrorDescription?: unknown;
  httpStatus: number;
  grant: string;
  platformRetryAfterSeconds?: number | undefined;
  /** Where the request went, named on a 404 or 405. */
  tokenEndpoint?: string | undefined;
}): PlatformError {
  const oauthError = sanitizePlatformText(fields.oauthError, 64) ?? 'unknown_error';
  // The platform's own words say what was wrong (a redirect_uri mismatch, a wrong secret): kept,
  // sanitised, capped, and already cleared of what the request sent (token-response.ts).
  const description = sanitizePlatformText(fields.oauthErrorDescription, 200);
  const code =
    oauthError === 'invalid_grant'
      ? 'ERR_PLATFORM_INVALID_GRANT'
      : oauthError === 'invalid_client' || oauthError === 'unauthorized_client'
        ? 'ERR_PLATFORM_INVALID_CLIENT'
        : 'ERR_PLATFORM_REFUSED';
  const { grant, httpStatus, platformRetryAfterSeconds, tokenEndpoint } = fields;
  return failed(code, [{ grant, oauthError, httpStatus, description, tokenEndpoint }], {
    oauthError,
    oauthErrorDescription: description,
    httpStatus,
    platformRetryAfterSeconds,
  });
}

/** The token store (Redis) did not answer in time or failed: try again shortly (`Retry-After: 2`). Compare-and-set writes keep the stored record consistent whatever happened to the call. */
export class StoreUnavailableError extends PlatformLoginError<'ERR_PLATFORM_STORE_UNAVAILABLE'> {
  readonly retryAfterSeconds = 2;
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_PLATFORM_STORE_UNAVAILABLE', message, options);
  }
}

/** A store (`store`: which one) that failed `what`, or did not answer it within `timeoutMs`. */
export const storeUnavailable = (
  where: { store: string; what: string; timeoutMs?: number; clientClosed?: boolean },
  cause?: unknown,
): StoreUnavailableError =>
  new StoreUnavailableError(messageOf('ERR_PLATFORM_STORE_UNAVAILABLE', where), { cause });

/** The platform rejected our client credentials (`invalid_client`) on `grant`: our setup. */
export const platformMisconfigured = (grant: string, cause: unknown) =>
  failed('ERR_PLATFORM_MISCONFIGURED', [{ grant }], { cause });

/** A token request `grant` to `tokenEndpoint` that timed out (`timeoutMs`) or could not be sent. */
export const tokenRequestFailed = (
  request: { tokenEndpoint: string; grant: string; timeoutMs: number },
  timedOut: boolean,
  cause?: unknown,
) =>
  timedOut
    ? failed('ERR_PLATFORM_TIMEOUT', [request])
    : failed('ERR_PLATFORM_NETWORK', [request], { cause });

/** A call to the open API (`where`: method and URL, no query) that timed out or could not be sent. */
export const openApiFailed = (where: string, timeoutMs: number | undefined, cause?: unknown) =>
  timeoutMs !== undefined
    ? failed('ERR_PLATFORM_API_TIMEOUT', [{ timeoutMs, where }])
    : failed('ERR_PLATFORM_API_UNREACHABLE', [where], { cause });

/** Any error this package raises; `switch (err.code)` narrows it to the family that carries the code. */
export type AnyPlatformLoginError =
  SetupError | LoginRequiredError | RequestRefusedError | PlatformError | StoreUnavailableError;

/** True for any error raised by this package. */
export function isPlatformLoginError(value: unknown): value is AnyPlatformLoginError {
  return value instanceof PlatformLoginError;
}

/** True when `value` is a package error with one of `codes`. */
export function hasCode<C extends PlatformErrorCode>(
  value: unknown,
  ...codes: readonly C[]
): value is AnyPlatformLoginError & { code: C } {
  return value instanceof PlatformLoginError && (codes as readonly string[]).includes(value.code);
}

/** The platform is down, slow or broken and the access token has expired. Tokens are kept. */
export const platformUnavailable = (
  message: string,
  options?: { cause?: unknown; retryAfterSeconds?: number },
): PlatformError => new PlatformError(message, { ...options, code: 'ERR_PLATFORM_UNAVAILABLE' });

/** A token-endpoint OAuth error (`INVALID_GRANT`, `INVALID_CLIENT`, `REFUSED`): `oauthError` and `httpStatus` set. */
export const isOAuthRefusal = (
  value: unknown,
): value is PlatformError & { oauthError: OAuthErrorCode; httpStatus: number } =>
  value instanceof PlatformError && OAUTH_REFUSAL_CODES.has(value.code);

/** An answer of the token endpoint that is not tokens: an OAuth error, or an invalid response. */
export const isTokenEndpointAnswer = (value: unknown): value is PlatformError =>
  isOAuthRefusal(value) || hasCode(value, 'ERR_PLATFORM_INVALID_RESPONSE');

/** The token endpoint answered something that is not a valid token response. */
export const invalidTokenResponse = (
  message: string,
  options?: PlatformFields & { cause?: unknown },
): PlatformError =>
  new PlatformError(message, { ...options, code: 'ERR_PLATFORM_INVALID_RESPONSE' });
