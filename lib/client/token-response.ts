// Turns what the token endpoint answered into a validated TokenSet or a typed error. Every field is
// checked with zod and only known fields are picked; messages name the field, never its value, and
// never quote the body.
import { z } from 'zod';
import { authUrlHint, invalidTokenResponse, tokenEndpointRefused } from '../errors';
import {
  isPlainObject,
  readStyledBody,
  type AnswerStyle,
  type AnswerStyleConfig,
} from './answer-styles';
import { TokenSet } from './token-set';

/** The grants the token endpoint is called with. */
export const TOKEN_GRANTS = ['authorization_code', 'refresh_token'] as const;
/** The grant a token request was made for. */
export type TokenGrant = (typeof TOKEN_GRANTS)[number];

/** The raw answer of one token request: status, content type and the (size-capped) body bytes. */
export interface TokenEndpointAnswer {
  status: number;
  contentType: string | null;
  body: Uint8Array;
}

/** What parsing a token response needs besides the body. */
export interface TokenResponseContext {
  /** The grant of the request, named in error messages. */
  grant: TokenGrant;
  /** A larger `expires_in` is lowered to this many seconds. */
  maxExpiresInSeconds: number;
  /** On refresh: the refresh token that was sent, kept when the response carries none (RFC 6749 6). */
  previousRefreshToken?: string | undefined;
  /** The HTTP status of the answer, recorded on errors. Defaults to 200. */
  httpStatus?: number | undefined;
  /** The answer's `Retry-After` in whole seconds, recorded on errors (the refresh holds back that long). */
  platformRetryAfterSeconds?: number | undefined;
  /** Secrets the request carried (code or refresh token, client secret), never repeated in an error. */
  secretsSent?: readonly string[] | undefined;
  /** How the platform answers (answer-styles.ts). Defaults to RFC 6749's `oauth`. */
  answers?: AnswerStyleConfig | undefined;
  /** Where the request went, named when nothing answers token requests there (a 404 or 405). */
  tokenEndpoint?: string | undefined;
}

const OAUTH_ANSWERS: AnswerStyleConfig = { answerStyle: 'oauth', answerCodes: {} };

/** An OAuth error body (RFC 6749 5.2) as found in an answer; both values still unsanitised. */
export interface OAuthErrorBody {
  error: unknown;
  errorDescription: unknown;
}

/** RFC 6749 A.12: access and refresh tokens are 1*VSCHAR. Also keeps CR/LF out of headers. */
const VSCHAR = /^[\x20-\x7e]+$/;
const NO_CONTROL_CHARACTERS = /^\P{Cc}*$/u;
const MAX_TOKEN_LENGTH = 4096;
const MAX_ID_LENGTH = 256;

/** Why a field was refused, keyed by field: the messages name the field, never the value. */
const FIELD_RULES = {
  access_token: `access_token must be a non-empty string of at most ${MAX_TOKEN_LENGTH} printable ASCII characters`,
  refresh_token: `refresh_token must be a non-empty string of at most ${MAX_TOKEN_LENGTH} printable ASCII characters`,
  expires_in: 'expires_in must be a positive number of seconds (an integer or a string of digits)',
  refresh_expires_in:
    'refresh_expires_in must be a positive number of seconds (an integer or a string of digits) when present',
  // A JSON number is refused: a large numeric id may already have lost precision in JSON.parse.
  open_id: `open_id must be a non-empty string of at most ${MAX_ID_LENGTH} characters`,
  scope: `scope must be a comma-separated string of entries of at most ${MAX_ID_LENGTH} characters without control characters`,
  unionid: `unionid must be a string of at most ${MAX_ID_LENGTH} characters when present`,
} as const;

type TokenField = keyof typeof FIELD_RULES;

const tokenString = z.string().min(1).max(MAX_TOKEN_LENGTH).regex(VSCHAR);
const identifier = z.string().max(MAX_ID_LENGTH).regex(NO_CONTROL_CHARACTERS);
/** A number of seconds, as a JSON integer or a string of digits (`"86400"`). */
const seconds = z.union([
  z.int().positive(),
  z
    .string()
    .regex(/^\d{1,12}$/)
    .transform(Number)
    .pipe(z.int().positive()),
]);

/**
 * The platform's token response: `access_token`, `expires_in`, `refresh_token`, `open_id`,
 * `unionid`, `scope`. Missing `scope` reads as no scope and a null or empty `unionid` as none: both
 * only lose information. A missing `refresh_token` is resolved by the caller.
 */
const tokenResponseSchema = z.object({
  access_token: tokenString,
  refresh_token: tokenString.nullish(),
  expires_in: seconds,
  /** The refresh token's remaining life, when the platform states it (the `envelope` style does). */
  refresh_expires_in: seconds.nullish(),
  open_id: identifier.min(1),
  // Each entry is an identifier as open_id is: what an app matches requireScopes against or shows.
  scope: z.string().max(MAX_TOKEN_LENGTH).nullish().transform(parseScope).pipe(z.array(identifier)),
  unionid: identifier.nullish(),
} satisfies Record<TokenField, z.ZodType>);

/**
 * Splits a scope string on commas (the platform's separator) and whitespace (RFC 6749 3.3's), trims,
 * drops empty entries and duplicates, keeping the first-seen order.
 */
export function parseScope(scope: string | null | undefined): string[] {
  if (scope === null || scope === undefined) return [];
  return [...new Set(scope.split(/[\s,]+/).filter((entry) => entry.length > 0))];
}

/** The refusal `body` carries in the platform's answer style, or as an OAuth error body. */
function refusalIn(body: unknown, context: TokenResponseContext): OAuthErrorBody | undefined {
  const styled = readStyledBody(body, context.answers ?? OAUTH_ANSWERS);
  return 'refusal' in styled ? styled.refusal : parseOAuthErrorBody(body);
}

/** The OAuth error carried by `body`, if it carries one: an own `error` field that is set. */
export function parseOAuthErrorBody(body: unknown): OAuthErrorBody | undefined {
  if (!isPlainObject(body) || !Object.hasOwn(body, 'error')) return undefined;
  const error = body.error;
  if (error === null || error === undefined || error === '') return undefined;
  return {
    error,
    errorDescription: Object.hasOwn(body, 'error_description') ? body.error_description : undefined,
  };
}

/** Shorter values are no credential, and replacing them would garble the text. */
const MIN_REDACTED_LENGTH = 8;

/**
 * `text` with each secret (raw, URL- or form-encoded) replaced by `[redacted]`: a platform may echo
 * what it was sent ("code … is invalid"), and an error's description ends up in logs.
 */
function withoutSecrets(text: unknown, secrets: readonly string[] | undefined): unknown {
  if (typeof text !== 'string' || secrets === undefined) return text;
  let redacted = text;
  for (const secret of secrets) {
    if (secret.length < MIN_REDACTED_LENGTH) continue;
    const forms = [
      secret,
      encodeURIComponent(secret),
      new URLSearchParams([['', secret]]).toString().slice(1),
    ];
    for (const form of forms) redacted = redacted.split(form).join('[redacted]');
  }
  return redacted;
}

const refused = (oauthError: OAuthErrorBody, context: TokenResponseContext) =>
  tokenEndpointRefused({
    oauthError: oauthError.error,
    oauthErrorDescription: withoutSecrets(oauthError.errorDescription, context.secretsSent),
    httpStatus: context.httpStatus ?? 200,
    grant: context.grant,
    platformRetryAfterSeconds: context.platformRetryAfterSeconds,
    tokenEndpoint: context.tokenEndpoint,
  });

/** The answer style a body is shaped as, where its shape tells. */
function shapeOf(body: Record<string, unknown>, configured: AnswerStyle): AnswerStyle | undefined {
  if ('errcode' in body) return 'errcode';
  if (isPlainObject(body.data)) return 'envelope';
  // Tokens at the top level are `oauth`'s (or `errcode`'s: both succeed alike), telling only where
  // an envelope was due.
  return configured === 'envelope' ? 'oauth' : undefined;
}

/**
 * A hint when the answer is shaped as another style than the one configured: a platform's success
 * looks alike in `oauth` and `errcode`, so a wrong `answerStyle` first shows on an answer like this.
 */
function styleHint(answerBody: unknown, context: TokenResponseContext): string {
  const configured = (context.answers ?? OAUTH_ANSWERS).answerStyle;
  if (!isPlainObject(answerBody)) return '';
  const looksLike = shapeOf(answerBody, configured);
  if (looksLike === undefined || looksLike === configured) return '';
  return ` It is shaped as the \`${looksLike}\` answer style while \`answerStyle\` is \`${configured}\`: see docs/answer-styles.md.`;
}

const invalid = (
  context: TokenResponseContext,
  problem: string,
  field?: TokenField,
  answerBody?: unknown,
) =>
  invalidTokenResponse(
    `The token endpoint's answer to the ${context.grant} request is invalid: ${problem}.${styleHint(answerBody, context)}`,
    {
      httpStatus: context.httpStatus ?? 200,
      platformRetryAfterSeconds: context.platformRetryAfterSeconds,
      ...(field === undefined ? {} : { field }),
    },
  );

/**
 * Validates a parsed token response body and builds the TokenSet. An `error` field, or a refusal
 * in the platform's answer style, makes it a PlatformError (an OAuth error's code) even with HTTP
 * 200. `expiresAt` counts from `requestStartedAt`, the moment the request was sent, so time spent
 * on the wire shortens the token's life rather than lengthening it.
 */
export function parseTokenResponse(
  answerBody: unknown,
  requestStartedAt: number,
  context: TokenResponseContext,
): TokenSet {
  const styled = readStyledBody(answerBody, context.answers ?? OAUTH_ANSWERS);
  if ('refusal' in styled) throw refused(styled.refusal, context);
  const body = 'unwrapped' in styled ? styled.unwrapped : styled.fields;
  // An OAuth refusal is one whatever the style (a gateway in front of the platform may answer so).
  const oauthError = parseOAuthErrorBody(body);
  if (oauthError !== undefined) throw refused(oauthError, context);
  if ('unwrapped' in styled)
    throw invalid(context, 'it has no `data` object holding the tokens', undefined, answerBody);
  if (!isPlainObject(body))
    throw invalid(context, 'the body is not a JSON object', undefined, answerBody);

  const result = tokenResponseSchema.safeParse(body);
  if (!result.success) {
    // The body is an object, so every issue is a field's (FIELD_RULES has a rule for each).
    const field = result.error.issues[0]!.path[0] as TokenField;
    throw invalid(context, FIELD_RULES[field], field, answerBody);
  }
  const data = result.data;
  const refreshToken = data.refresh_token ?? context.previousRefreshToken;
  if (refreshToken === undefined)
    throw invalid(context, FIELD_RULES.refresh_token, 'refresh_token');

  const expiresIn = Math.min(data.expires_in, context.maxExpiresInSeconds);
  return new TokenSet({
    accessToken: data.access_token,
    refreshToken,
    expiresIn,
    expiresAt: requestStartedAt + expiresIn * 1000,
    ...(data.refresh_expires_in ? { refreshExpiresIn: data.refresh_expires_in } : {}),
    openId: data.open_id,
    ...(data.unionid ? { unionId: data.unionid } : {}),
    scope: data.scope,
  });
}

/** Decodes strictly: bytes that are not UTF-8 are garbage, not text with replacement marks. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The media type of a Content-Type header, reduced to harmless characters for a message. */
function mediaTypeOf(contentType: string | null): string {
  const mediaType = (contentType ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9.+/-]/g, '')
    .slice(0, 100);
  return mediaType === '' ? 'none' : mediaType;
}

/** The body read as JSON whatever the content type claims, or what it was when it is not JSON. */
function decodeBody(answer: TokenEndpointAnswer): { json: unknown } | { not: string } {
  const notJson = {
    not: `a body that is not JSON (content-type ${mediaTypeOf(answer.contentType)})`,
  };
  let text: string;
  try {
    text = utf8.decode(answer.body);
  } catch {
    return notJson;
  }
  if (text.trim() === '') return { not: 'an empty body' };
  try {
    return { json: JSON.parse(text) };
  } catch {
    return mediaTypeOf(answer.contentType) === 'text/html' || text.trimStart().startsWith('<')
      ? { not: 'an HTML page instead of JSON' }
      : notJson;
  }
}

/**
 * Interprets one answer of the token endpoint: a redirect, a non-2xx status, an OAuth error body or
 * a body that is not a token response become typed errors; a valid token response a TokenSet.
 */
export function interpretTokenAnswer(
  answer: TokenEndpointAnswer,
  requestStartedAt: number,
  context: TokenResponseContext,
): TokenSet {
  const withStatus = { ...context, httpStatus: answer.status };
  if (answer.status >= 300 && answer.status < 400) {
    throw invalidTokenResponse(
      `The token endpoint answered the ${context.grant} request with a redirect (HTTP ${answer.status}), ` +
        'which is not followed. Check authUrl: it must be the exact base of the token service.',
      { httpStatus: answer.status, platformRetryAfterSeconds: context.platformRetryAfterSeconds },
    );
  }
  const decoded = decodeBody(answer);
  if (answer.status < 200 || answer.status >= 300) {
    const oauthError = 'json' in decoded ? refusalIn(decoded.json, context) : undefined;
    if (oauthError !== undefined) throw refused(oauthError, withStatus);
    const what =
      'not' in decoded
        ? decoded.not
        : isPlainObject(decoded.json)
          ? 'JSON without an OAuth error'
          : 'JSON that is not an object';
    throw invalidTokenResponse(
      `The token endpoint answered the ${context.grant} request with HTTP ${answer.status} and ${what}.` +
        authUrlHint(answer.status, context.tokenEndpoint),
      { httpStatus: answer.status, platformRetryAfterSeconds: context.platformRetryAfterSeconds },
    );
  }
  if ('not' in decoded) throw invalid(withStatus, `the body is ${decoded.not}`);
  return parseTokenResponse(decoded.json, requestStartedAt, withStatus);
}
