// How a platform's token endpoint says "no": as RFC 6749 (`oauth`), with a numeric `errcode` in an
// HTTP 200 (`errcode`), or inside a `data` envelope (`envelope`). Every style's refusal is read
// into the one OAuth error the failure policy already answers (docs/answer-styles.md).
import { z } from 'zod';

/** The styles a token endpoint answers in. */
export const ANSWER_STYLES = ['oauth', 'errcode', 'envelope'] as const;
export type AnswerStyle = (typeof ANSWER_STYLES)[number];

/**
 * What a platform's refusal means for the login, whatever its style, each kind to the OAuth error
 * it is answered as: `invalid_grant` ends a refresh (401 `reauth_required`) and refuses an entry's
 * code, `invalid_client` is our setup, `slow_down` is the platform's hold,
 * `temporarily_unavailable` a transient fault; a known "bad parameter" is OAuth's own.
 */
const AS_OAUTH_ERROR = {
  code_rejected: 'invalid_grant',
  refresh_token_dead: 'invalid_grant',
  rate_limited: 'slow_down',
  busy: 'temporarily_unavailable',
  misconfigured: 'invalid_client',
  invalid_request: 'invalid_request',
} as const;
export type AnswerKind = Exclude<keyof typeof AS_OAUTH_ERROR, 'invalid_request'>;
/** The kinds a studio's own codes may mean (`answerCodes`): all but OAuth's own. */
const ANSWER_KINDS = Object.keys(AS_OAUTH_ERROR).filter(
  (kind) => kind !== 'invalid_request',
) as AnswerKind[];
/** An unknown code is the platform's transient fault: never a logout, never an entry failure. */
const UNKNOWN_CODE_ERROR = 'server_error';

type BuiltInCodes = Readonly<Record<string, AnswerKind | 'invalid_request'>>;

/** The codes of the best-known platform of each numeric style (docs/answer-styles.md). */
const BUILT_IN_CODES: Readonly<Record<Exclude<AnswerStyle, 'oauth'>, BuiltInCodes>> = {
  errcode: {
    '40029': 'code_rejected',
    '40163': 'code_rejected',
    '40030': 'refresh_token_dead',
    '42002': 'refresh_token_dead',
    '40125': 'misconfigured',
    '40013': 'misconfigured',
    '45011': 'rate_limited',
    '-1': 'busy',
  },
  envelope: {
    '10007': 'code_rejected',
    '10010': 'refresh_token_dead',
    '10003': 'misconfigured',
    '10013': 'misconfigured',
    '10020': 'rate_limited',
    '2100004': 'busy',
    '10002': 'invalid_request',
    '2100005': 'invalid_request',
  },
};

/** A platform code as the tables key it: an integer, or a string of one (`"0"`, `"-1"`). */
const NUMERIC_CODE = /^-?\d{1,12}$/;
const codeOf = (value: unknown): string | undefined => {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string' && NUMERIC_CODE.test(value.trim())) {
    return String(Number(value.trim()));
  }
  return undefined;
};

/** The options that name the platform's answer style, as platformLogin() and the client take them. */
export const answerShape = {
  /**
   * How the platform's token endpoint answers: `'oauth'` (RFC 6749: a 4xx with `error`),
   * `'errcode'` (HTTP 200 with `{ errcode, errmsg }` on failure) or `'envelope'` (the fields inside
   * `data`, failures as `data.error_code` / `data.description`). Defaults to `'oauth'`.
   */
  answerStyle: z
    .enum(ANSWER_STYLES, { error: "must be 'oauth', 'errcode' or 'envelope'" })
    .default('oauth'),
  /**
   * The platform's codes the built-in style does not know, each to what it means:
   * `{ '40164': 'misconfigured' }`; one of `code_rejected`, `refresh_token_dead`, `rate_limited`,
   * `busy`, `misconfigured`. A code in neither table is a transient platform fault. Defaults to `{}`.
   */
  answerCodes: z
    .record(
      z.string().regex(NUMERIC_CODE, { error: 'keys must be integer codes, e.g. "40164"' }),
      z.enum(ANSWER_KINDS, {
        error: `values must be one of ${ANSWER_KINDS.join(', ')}`,
      }),
    )
    .default({}),
};

/** The parsed answer options. */
export type AnswerStyleConfig = z.output<z.ZodObject<typeof answerShape>>;

/** A refusal read from a styled body: the OAuth error it is answered as, and the platform's words. */
export interface StyledRefusal {
  error: string;
  /** `errcode 40030: <the platform's message>`; still unsanitised. */
  errorDescription: string;
}

/**
 * What a body says, once its style is read: the token fields, a refusal, or (in the `envelope`
 * style) an object with no `data` envelope: another style's answer.
 */
export type StyledBody =
  { fields: unknown } | { refusal: StyledRefusal } | { unwrapped: Record<string, unknown> };

/** A JSON object: not null, not an array. */
export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const own = (value: Record<string, unknown>, key: string): unknown =>
  Object.hasOwn(value, key) ? value[key] : undefined;

function refusal(
  config: AnswerStyleConfig,
  style: Exclude<AnswerStyle, 'oauth'>,
  code: string,
  message: unknown,
): StyledRefusal {
  // `code` is a string of digits (codeOf), so no key of Object.prototype answers for it.
  const kind = config.answerCodes[code] ?? BUILT_IN_CODES[style][code];
  const said = typeof message === 'string' && message !== '' ? `: ${message}` : '';
  return {
    error: kind === undefined ? UNKNOWN_CODE_ERROR : AS_OAUTH_ERROR[kind],
    errorDescription: `${style === 'errcode' ? 'errcode' : 'error_code'} ${code}${said}`,
  };
}

/**
 * Reads `body` in the configured style: the object holding the token fields, or the refusal it
 * carries. A code that is not a number leaves the body as it is, for the field checks to refuse.
 */
export function readStyledBody(body: unknown, config: AnswerStyleConfig): StyledBody {
  if (config.answerStyle === 'oauth' || !isPlainObject(body)) return { fields: body };
  if (config.answerStyle === 'errcode') {
    const code = codeOf(own(body, 'errcode'));
    if (code === undefined || code === '0') return { fields: body };
    return { refusal: refusal(config, 'errcode', code, own(body, 'errmsg')) };
  }
  const data = own(body, 'data');
  if (!isPlainObject(data)) return { unwrapped: body };
  const code = codeOf(own(data, 'error_code'));
  if (code === undefined || code === '0') return { fields: data };
  return { refusal: refusal(config, 'envelope', code, own(data, 'description')) };
}
