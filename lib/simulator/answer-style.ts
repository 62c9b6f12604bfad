// The simulator's answers in each style a platform of this family uses: RFC 6749 (`oauth`), an
// HTTP 200 with `{ errcode, errmsg }` (`errcode`), or everything inside `data` with numbers as
// strings (`envelope`). The token rules (token-grants.ts) decide; this only dresses the answer.
/** What the endpoint answers, before any fault reshapes it. */
export interface TokenOutcome {
  status: 200 | 400 | 401 | 429 | 503;
  body: Record<string, unknown>;
  /** On tokens: what is left of the refresh token's life, which the `envelope` style states. */
  refreshExpiresInSeconds?: number;
}

/** The styles the simulator answers in. */
export const SIMULATOR_ANSWER_STYLES = ['oauth', 'errcode', 'envelope'] as const;
export type SimulatorAnswerStyle = (typeof SIMULATOR_ANSWER_STYLES)[number];

/** Each failure's code in the numeric styles: the best-known platforms' own. */
const CODES = {
  code_rejected: { errcode: 40029, envelope: 10007 },
  refresh_expired: { errcode: 42002, envelope: 10010 },
  refresh_invalid: { errcode: 40030, envelope: 10010 },
  bad_client: { errcode: 40125, envelope: 10013 },
  bad_request: { errcode: 40097, envelope: 2100005 },
  rate_limited: { errcode: 45011, envelope: 10020 },
  busy: { errcode: -1, envelope: 2100004 },
} as const;

/** A failure the platform reports, whatever its style says it with. */
type PlatformFailure = keyof typeof CODES;

/** What an RFC 6749 answer of the rules is, in the terms of a numeric style. */
function failureOf(outcome: TokenOutcome, grant: string | undefined): PlatformFailure {
  const { error, error_description: description } = outcome.body;
  if (error === 'invalid_client') return 'bad_client';
  if (error === 'temporarily_unavailable') return 'rate_limited';
  if (error !== 'invalid_grant') return 'bad_request';
  if (grant !== 'refresh_token') return 'code_rejected';
  return typeof description === 'string' && description.includes('expired')
    ? 'refresh_expired'
    : 'refresh_invalid';
}

/** The answer the numeric styles give for `failure`, with the platform's words. */
export function failureAnswer(
  style: SimulatorAnswerStyle,
  failure: PlatformFailure,
  message: string,
): TokenOutcome {
  if (style === 'errcode') {
    return { status: 200, body: { errcode: CODES[failure].errcode, errmsg: message } };
  }
  if (style === 'envelope') {
    return {
      status: 200,
      body: {
        data: { error_code: CODES[failure].envelope, description: message },
        extra: { logid: `sim-${Date.now().toString(16)}`, now: Date.now() },
        message: 'error',
      },
    };
  }
  // RFC 6749's: a throttle is a 429, a busy platform a 503.
  const status = failure === 'rate_limited' ? 429 : 503;
  return { status, body: { error: 'temporarily_unavailable', error_description: message } };
}

/** `outcome` (the rules' RFC 6749 answer) as the platform of `style` sends it. */
export function styledOutcome(
  style: SimulatorAnswerStyle,
  outcome: TokenOutcome,
  grant: string | undefined,
): TokenOutcome {
  if (style === 'oauth') return outcome;
  if (outcome.status !== 200) {
    const description = outcome.body.error_description;
    return failureAnswer(
      style,
      failureOf(outcome, grant),
      typeof description === 'string' ? description : 'error',
    );
  }
  if (style === 'errcode') return outcome;
  // The envelope's numbers come as strings, and the refresh token's remaining life beside them.
  const { expires_in: expiresIn, ...fields } = outcome.body;
  return {
    status: 200,
    body: {
      data: {
        ...fields,
        expires_in: String(expiresIn),
        ...(outcome.refreshExpiresInSeconds === undefined
          ? {}
          : { refresh_expires_in: String(outcome.refreshExpiresInSeconds) }),
        error_code: '0',
        description: '',
      },
      message: 'success',
    },
  };
}
