// The token endpoint's answer styles (docs/answer-styles.md): each style's refusals land in the one
// taxonomy — code rejected, refresh token dead, rate limited, busy, misconfigured — and each kind
// gets the failure policy's one behaviour; an unknown code is a transient fault.
import type { AnswerStyleConfig } from '../../lib/client/answer-styles';
import { interpretTokenAnswer, type TokenResponseContext } from '../../lib/client/token-response';
import { isTransientFailure } from '../../lib/client/retry';
import {
  answerForTokenFailure,
  failedOnItsCode,
  platformRetryAfterSeconds,
} from '../../lib/core/failure-policy';
import { newTokenRecord, renewedTokenRecord } from '../../lib/core/token-record';
import { PlatformError } from '../../lib/errors';
import { PlatformTokenClient } from '../../lib/client/token-client';
import type { TokenSet } from '../../lib/client/token-set';

const STARTED_AT = Date.UTC(2030, 0, 1, 12, 0, 0);
const encoder = new TextEncoder();
const DAY_MS = 86_400_000;

const style = (
  answerStyle: AnswerStyleConfig['answerStyle'],
  answerCodes: AnswerStyleConfig['answerCodes'] = {},
) => ({ answerStyle, answerCodes });

function read(
  body: unknown,
  answers: AnswerStyleConfig,
  grant: TokenResponseContext['grant'] = 'refresh_token',
  extra: Partial<TokenResponseContext> = {},
): TokenSet | PlatformError {
  try {
    return interpretTokenAnswer(
      { status: 200, contentType: 'application/json', body: encoder.encode(JSON.stringify(body)) },
      STARTED_AT,
      { grant, maxExpiresInSeconds: 86_400, previousRefreshToken: 'rt-0', answers, ...extra },
    );
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
}

const failureOf = (result: TokenSet | PlatformError): PlatformError => {
  expect(result).toBeInstanceOf(PlatformError);
  return result as PlatformError;
};

/** What the package answers: at an entry, and on a refresh. */
const answers = (error: PlatformError) => ({
  entry: (answerForTokenFailure(error, 'authorization_code', 5) as PlatformError).error,
  refresh: answerForTokenFailure(error, 'refresh_token', 5).error,
  counted: failedOnItsCode(error),
  transient: isTransientFailure(error),
});

const errcode = (code: number | string, errmsg = 'said') => ({ errcode: code, errmsg });
const envelope = (code: number | string, description = 'said') => ({
  data: { error_code: code, description },
  extra: { logid: '2020070614111601022506808001045D59', now: 1594015876138 },
});

describe('every style lands in the taxonomy, with one behaviour each', () => {
  test.each([
    ['errcode 40029 (code invalid)', 'errcode', errcode(40029)],
    ['errcode 40163 (code used)', 'errcode', errcode(40163)],
    ['envelope 10007 (code expired)', 'envelope', envelope(10007)],
    ['oauth invalid_grant', 'oauth', { error: 'invalid_grant' }],
  ] as const)('code rejected, %s: the entry 400 and counted', (_name, answerStyle, body) => {
    const error = failureOf(read(body, style(answerStyle), 'authorization_code'));
    expect(answers(error)).toMatchObject({ entry: 'code_rejected', counted: true });
  });

  test.each([
    ['errcode 40030 (invalid refresh_token)', 'errcode', errcode(40030)],
    ['errcode 42002 (refresh_token expired)', 'errcode', errcode('42002')],
    ['envelope 10010 (refresh_token expired)', 'envelope', envelope(10010)],
    ['envelope 10010 as a string', 'envelope', envelope('10010')],
    ['oauth invalid_grant', 'oauth', { error: 'invalid_grant' }],
  ] as const)(
    'refresh token dead, %s: 401 reauth_required, not retried',
    (_name, answerStyle, body) => {
      const error = failureOf(read(body, style(answerStyle)));
      expect(answers(error)).toMatchObject({ refresh: 'reauth_required', transient: false });
    },
  );

  test.each([
    ['errcode 45011', 'errcode', errcode(45011)],
    ['envelope 10020', 'envelope', envelope(10020)],
  ] as const)(
    "rate limited, %s: held with the platform's wait, never an entry failure",
    (_name, answerStyle, body) => {
      const sent = failureOf(
        read(body, style(answerStyle), 'authorization_code', {
          platformRetryAfterSeconds: 30,
        }),
      );
      expect(platformRetryAfterSeconds(sent)).toBe(30);
      expect(answers(sent)).toMatchObject({ counted: false, refresh: 'platform_unavailable' });
      expect(answerForTokenFailure(sent, 'refresh_token', 5)).toMatchObject({
        retryAfterSeconds: 30,
      });
      // No Retry-After (an errcode platform sends none): still a hold, of the default wait.
      const unsaid = failureOf(read(body, style(answerStyle), 'authorization_code'));
      expect(platformRetryAfterSeconds(unsaid)).toBeGreaterThan(0);
    },
  );

  test.each([
    ['errcode -1 (system busy)', 'errcode', errcode(-1)],
    ['errcode "-1"', 'errcode', errcode('-1')],
    ['envelope 2100004', 'envelope', envelope(2100004)],
    ['an unknown errcode', 'errcode', errcode(48001)],
    ['an unknown envelope code', 'envelope', envelope('2190016')],
  ] as const)(
    'busy or unknown, %s: transient — 503 platform_unavailable on a refresh, not counted',
    (_name, answerStyle, body) => {
      const error = failureOf(read(body, style(answerStyle)));
      expect(answers(error)).toEqual({
        entry: 'platform_error',
        refresh: 'platform_unavailable',
        counted: false,
        transient: true,
      });
    },
  );

  test.each([
    ['errcode 40125 (wrong secret)', 'errcode', errcode(40125)],
    ['errcode 40013 (wrong app id)', 'errcode', errcode(40013)],
    ['envelope 10013', 'envelope', envelope(10013)],
  ] as const)('misconfigured, %s: 503 platform_misconfigured', (_name, answerStyle, body) => {
    const error = failureOf(read(body, style(answerStyle)));
    expect(answers(error)).toMatchObject({
      entry: 'platform_misconfigured',
      refresh: 'platform_misconfigured',
      counted: false,
    });
  });

  test("a studio's table names codes the built-in style does not know, and wins over it", () => {
    const table = style('errcode', { '40164': 'misconfigured', '-1': 'refresh_token_dead' });
    expect(answers(failureOf(read(errcode(40164), table))).refresh).toBe('platform_misconfigured');
    expect(answers(failureOf(read(errcode(-1), table))).refresh).toBe('reauth_required');
  });

  test("the platform's words and code are in the message, never what was sent", () => {
    const error = failureOf(
      read(
        errcode(40030, 'invalid refresh_token rt-secret-123456, hints: [x]'),
        style('errcode'),
        'refresh_token',
        {
          secretsSent: ['rt-secret-123456'],
        },
      ),
    );
    expect(error.message).toContain('errcode 40030');
    expect(error.message).not.toContain('rt-secret-123456');
  });
});

describe('successes in each style', () => {
  const fields = {
    access_token: 'at-1',
    refresh_token: 'rt-1',
    open_id: 'player-ada',
    scope: 'user_info',
  };

  test('errcode: a plain object, errcode 0 or absent', () => {
    for (const body of [
      { ...fields, expires_in: 7200 },
      { ...fields, expires_in: 7200, errcode: 0 },
    ]) {
      const tokens = read(body, style('errcode')) as TokenSet;
      expect(tokens.accessToken).toBe('at-1');
      expect(tokens.expiresIn).toBe(7200);
    }
  });

  test('envelope: the fields inside data, numbers as strings, refresh_expires_in read', () => {
    const tokens = read(
      {
        data: {
          ...fields,
          expires_in: '86400',
          refresh_expires_in: '2592000',
          error_code: '0',
          description: '',
        },
        message: 'success',
      },
      style('envelope'),
    ) as TokenSet;
    expect(tokens.accessToken).toBe('at-1');
    expect(tokens.expiresIn).toBe(86_400);
    expect(tokens.refreshExpiresIn).toBe(2_592_000);
  });

  test("envelope without a data object: another style's answer, not tokens; an OAuth refusal is still one", () => {
    const plain = failureOf(read({ ...fields, expires_in: 7200 }, style('envelope')));
    expect(plain.code).toBe('ERR_PLATFORM_INVALID_RESPONSE');
    expect(plain.message).toContain('no `data` object');
    expect(plain.message).toContain(
      'shaped as the `oauth` answer style while `answerStyle` is `envelope`',
    );
    const error = failureOf(read({ data: 'x', message: 'error' }, style('envelope')));
    expect(error.code).toBe('ERR_PLATFORM_INVALID_RESPONSE');
    const refused = failureOf(read({ error: 'invalid_grant' }, style('envelope')));
    expect(refused.code).toBe('ERR_PLATFORM_INVALID_GRANT');
  });

  test('the oauth style reads an errcode body as it always did: not tokens', () => {
    const error = failureOf(read(errcode(40030), style('oauth')));
    expect(error.code).toBe('ERR_PLATFORM_INVALID_RESPONSE');
  });

  test('a styled refusal in a non-2xx answer is read as well', () => {
    expect(() =>
      interpretTokenAnswer(
        {
          status: 400,
          contentType: 'application/json',
          body: encoder.encode(JSON.stringify(errcode(40030))),
        },
        STARTED_AT,
        { grant: 'refresh_token', maxExpiresInSeconds: 86_400, answers: style('errcode') },
      ),
    ).toThrow(expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_GRANT' }));
  });
});

describe("refresh_expires_in is the refresh token's known end", () => {
  const received = {
    accessToken: 'at',
    refreshToken: 'rt',
    expiresIn: 3600,
    expiresAt: STARTED_AT + 3_600_000,
    openId: 'p',
    scope: [],
  };

  test('caps a new record at the stated end, never beyond the configured lifetime', () => {
    expect(
      newTokenRecord({ ...received, refreshExpiresIn: 86_400 }, 90 * DAY_MS).refreshExpiresAt,
    ).toBe(STARTED_AT + DAY_MS);
    expect(
      newTokenRecord({ ...received, refreshExpiresIn: 365 * 86_400 }, 90 * DAY_MS).refreshExpiresAt,
    ).toBe(STARTED_AT + 90 * DAY_MS);
    expect(newTokenRecord(received, 90 * DAY_MS).refreshExpiresAt).toBe(STARTED_AT + 90 * DAY_MS);
  });

  test('a refresh that keeps the refresh token takes the stated end too', () => {
    const first = newTokenRecord(received, 90 * DAY_MS);
    const later = { ...received, expiresAt: STARTED_AT + 7_200_000, refreshExpiresIn: 1800 };
    // obtainedAt of `later` is one hour after the first: its stated 30 minutes end then.
    expect(renewedTokenRecord(first, later, 90 * DAY_MS).refreshExpiresAt).toBe(
      STARTED_AT + 3_600_000 + 1_800_000,
    );
    expect(
      renewedTokenRecord(first, { ...later, refreshExpiresIn: undefined }, 90 * DAY_MS),
    ).toMatchObject({ refreshExpiresAt: first.refreshExpiresAt });
  });
});

test('the client takes the style as an option and refuses an unknown one or a wrong table', () => {
  const base = {
    authUrl: 'https://platform.example',
    clientId: 'c',
    clientSecret: 's',
    redirectUri: 'https://game.example/cb',
  };
  expect(() => new PlatformTokenClient({ ...base, answerStyle: 'envelope' })).not.toThrow();
  expect(() => new PlatformTokenClient({ ...base, answerStyle: 'xml' as 'oauth' })).toThrow(
    /answerStyle/,
  );
  expect(
    () =>
      new PlatformTokenClient({
        ...base,
        answerCodes: { '40164': 'logout' as 'busy' },
      }),
  ).toThrow(/answerCodes/);
});
