// Validation of the token endpoint's answers: every field rule, every kind of broken body.
import { PlatformError } from '../../lib/errors';
import { TokenSet } from '../../lib/client/token-set';
import {
  interpretTokenAnswer,
  parseOAuthErrorBody,
  parseScope,
  parseTokenResponse,
  type TokenResponseContext,
} from '../../lib/client/token-response';

const STARTED_AT = Date.UTC(2030, 0, 1, 12, 0, 0);
const exchange: TokenResponseContext = { grant: 'authorization_code', maxExpiresInSeconds: 86_400 };
const refresh: TokenResponseContext = {
  grant: 'refresh_token',
  maxExpiresInSeconds: 86_400,
  previousRefreshToken: 'rt-previous',
};

const valid = {
  access_token: 'at-1',
  expires_in: 7200,
  refresh_token: 'rt-1',
  open_id: 'player-ada',
  scope: 'user_info,basic_actions',
  unionid: 'union-ada',
};

/** What `run` throws, checked to be an `errorClass`; fails the test when nothing is thrown. */
function thrownBy<E extends Error>(
  errorClass: abstract new (...args: never[]) => E,
  run: () => unknown,
): E {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(errorClass);
    return error as E;
  }
  throw new Error(`expected a ${errorClass.name}`);
}

/** An invalid token response: PlatformError `ERR_PLATFORM_INVALID_RESPONSE`. */
const refusal = (run: () => unknown): PlatformError => {
  const error = thrownBy(PlatformError, run);
  expect(error.code).toBe('ERR_PLATFORM_INVALID_RESPONSE');
  return error;
};
/** An OAuth error of the token endpoint: PlatformError with an OAuth error's code. */
const endpointError = (run: () => unknown): PlatformError => {
  const error = thrownBy(PlatformError, run);
  expect([
    'ERR_PLATFORM_INVALID_GRANT',
    'ERR_PLATFORM_INVALID_CLIENT',
    'ERR_PLATFORM_REFUSED',
  ]).toContain(error.code);
  return error;
};

const encoder = new TextEncoder();
const answer = (status: number, body: string | Uint8Array, contentType = 'application/json') => ({
  status,
  contentType,
  body: typeof body === 'string' ? encoder.encode(body) : body,
});

describe('parseTokenResponse', () => {
  it('builds a TokenSet from a valid response, expiring from the moment the request was sent', () => {
    const tokens = parseTokenResponse(valid, STARTED_AT, exchange);
    expect(tokens).toBeInstanceOf(TokenSet);
    expect(tokens.accessToken).toBe('at-1');
    expect(tokens.refreshToken).toBe('rt-1');
    expect(tokens.expiresIn).toBe(7200);
    expect(tokens.expiresAt).toBe(STARTED_AT + 7_200_000);
    expect(tokens.openId).toBe('player-ada');
    expect(tokens.unionId).toBe('union-ada');
    expect(tokens.scope).toEqual(['user_info', 'basic_actions']);
  });

  it('accepts expires_in as a string of digits', () => {
    const tokens = parseTokenResponse({ ...valid, expires_in: '3600' }, STARTED_AT, exchange);
    expect(tokens.expiresIn).toBe(3600);
    expect(tokens.expiresAt).toBe(STARTED_AT + 3_600_000);
  });

  it('caps an expires_in above maxExpiresInSeconds', () => {
    const tokens = parseTokenResponse({ ...valid, expires_in: 999_999_999 }, STARTED_AT, {
      ...exchange,
      maxExpiresInSeconds: 43_200,
    });
    expect(tokens.expiresIn).toBe(43_200);
    expect(tokens.expiresAt).toBe(STARTED_AT + 43_200_000);
  });

  it.each<[string, unknown]>([
    ['zero', 0],
    ['negative', -60],
    ['fractional', 7200.5],
    ['a word', 'soon'],
    ['a negative string', '-60'],
    ['a fractional string', '7200.5'],
    ['a zero string', '0'],
    ['an empty string', ''],
    ['a boolean', true],
    ['null', null],
    ['infinite', Number.POSITIVE_INFINITY],
    ['beyond safe integers', 2 ** 60],
  ])('refuses an expires_in that is %s', (_label, expiresIn) => {
    const error = refusal(() =>
      parseTokenResponse({ ...valid, expires_in: expiresIn }, STARTED_AT, exchange),
    );
    expect(error.field).toBe('expires_in');
    expect(error.message).toContain('expires_in must be a positive number of seconds');
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no access_token', { access_token: undefined }, 'access_token'],
    ['an empty access_token', { access_token: '' }, 'access_token'],
    ['a numeric access_token', { access_token: 12345 }, 'access_token'],
    ['an access_token with a line break', { access_token: 'at\r\nX-Evil: 1' }, 'access_token'],
    ['an access_token of 4097 characters', { access_token: 'a'.repeat(4097) }, 'access_token'],
    ['an empty refresh_token', { refresh_token: '' }, 'refresh_token'],
    ['an object as refresh_token', { refresh_token: { value: 'x' } }, 'refresh_token'],
    ['no expires_in', { expires_in: undefined }, 'expires_in'],
    ['no open_id', { open_id: undefined }, 'open_id'],
    ['an empty open_id', { open_id: '' }, 'open_id'],
    ['a numeric open_id (precision may be lost)', { open_id: 1234567890123 }, 'open_id'],
    ['an open_id of 257 characters', { open_id: 'p'.repeat(257) }, 'open_id'],
    ['an open_id with a control character', { open_id: 'ada\u0000' }, 'open_id'],
    ['an open_id with a line break', { open_id: 'ada\r\nX-Evil: 1' }, 'open_id'],
    ['a numeric scope', { scope: 3 }, 'scope'],
    ['a scope entry with a control character', { scope: 'user_info,bas\u0007ic' }, 'scope'],
    ['a scope entry with an escape sequence', { scope: 'user_info,\u001b[2Jadmin' }, 'scope'],
    ['a scope entry with a C1 control character', { scope: 'user_info\u0085' }, 'scope'],
    ['a scope entry of 257 characters', { scope: `user_info,${'s'.repeat(257)}` }, 'scope'],
    ['a scope array', { scope: ['user_info'] }, 'scope'],
    ['a numeric unionid', { unionid: 987 }, 'unionid'],
  ])('refuses %s, naming the field', (_label, change, field) => {
    const error = refusal(() => parseTokenResponse({ ...valid, ...change }, STARTED_AT, exchange));
    expect(error.field).toBe(field);
    expect(error.message).toContain(`${field} must be`);
    expect(error.message).toContain('authorization_code');
  });

  it.each([
    ['errcode', { errcode: 40029, errmsg: 'invalid code' }],
    ['envelope', { data: { error_code: 10007, description: 'code expired' }, message: 'error' }],
  ])(
    'names the %s style when an answer is shaped as it while answerStyle is oauth',
    (style, body) => {
      const error = refusal(() => parseTokenResponse(body, STARTED_AT, exchange));
      expect(error.message).toContain(`shaped as the \`${style}\` answer style`);
      expect(error.message).toContain('docs/answer-styles.md');
    },
  );

  it('adds no style hint to an invalid answer of the configured style', () => {
    const error = refusal(() =>
      parseTokenResponse({ ...valid, access_token: '' }, STARTED_AT, exchange),
    );
    expect(error.message).not.toContain('answer style');
  });

  it('accepts an access_token of exactly 4096 printable characters', () => {
    const accessToken = 'a'.repeat(4096);
    const tokens = parseTokenResponse(
      { ...valid, access_token: accessToken },
      STARTED_AT,
      exchange,
    );
    expect(tokens.accessToken).toBe(accessToken);
  });

  it('requires a refresh_token from the code exchange', () => {
    const { refresh_token: _dropped, ...withoutRefreshToken } = valid;
    const error = refusal(() => parseTokenResponse(withoutRefreshToken, STARTED_AT, exchange));
    expect(error.field).toBe('refresh_token');
  });

  it('keeps the refresh token that was sent when a refresh response carries none', () => {
    const { refresh_token: _dropped, ...withoutRefreshToken } = valid;
    expect(parseTokenResponse(withoutRefreshToken, STARTED_AT, refresh).refreshToken).toBe(
      'rt-previous',
    );
    expect(
      parseTokenResponse({ ...valid, refresh_token: null }, STARTED_AT, refresh).refreshToken,
    ).toBe('rt-previous');
  });

  it('takes a new refresh token from a refresh response that carries one (rotation)', () => {
    expect(parseTokenResponse(valid, STARTED_AT, refresh).refreshToken).toBe('rt-1');
  });

  it('holds each scope entry to the rules of open_id: line breaks and tabs still separate entries', () => {
    const scope = `user_info,\tbasic_actions\r\n${'s'.repeat(256)}`;
    expect(parseTokenResponse({ ...valid, scope }, STARTED_AT, exchange).scope).toEqual([
      'user_info',
      'basic_actions',
      's'.repeat(256),
    ]);
  });

  it('reads a missing or null scope as no scope', () => {
    const { scope: _dropped, ...withoutScope } = valid;
    expect(parseTokenResponse(withoutScope, STARTED_AT, exchange).scope).toEqual([]);
    expect(parseTokenResponse({ ...valid, scope: null }, STARTED_AT, exchange).scope).toEqual([]);
  });

  it('leaves unionId out when unionid is missing, null or empty', () => {
    const { unionid: _dropped, ...withoutUnionId } = valid;
    for (const body of [withoutUnionId, { ...valid, unionid: null }, { ...valid, unionid: '' }]) {
      const tokens = parseTokenResponse(body, STARTED_AT, exchange);
      expect(tokens.unionId).toBeUndefined();
      expect(JSON.parse(JSON.stringify(tokens))).not.toHaveProperty('unionId');
    }
  });

  it('ignores unknown fields and never merges them, not even __proto__ or constructor', () => {
    const body: unknown = JSON.parse(
      JSON.stringify(valid).replace(
        '{',
        '{"__proto__":{"polluted":true,"accessToken":"evil"},"constructor":{"prototype":{"polluted":true}},"token_type":"bearer","isAdmin":true,',
      ),
    );
    const tokens = parseTokenResponse(body, STARTED_AT, exchange);
    expect(tokens.accessToken).toBe('at-1');
    expect(Object.keys(tokens).sort()).toEqual([
      'expiresAt',
      'expiresIn',
      'openId',
      'scope',
      'unionId',
    ]);
    expect((tokens as unknown as Record<string, unknown>).polluted).toBeUndefined();
    expect((tokens as unknown as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['an array', [valid]],
    ['a string', 'access_token'],
    ['a number', 42],
  ])('refuses a body that is %s', (_label, body) => {
    const error = refusal(() => parseTokenResponse(body, STARTED_AT, exchange));
    expect(error.message).toContain('not a JSON object');
    expect(error.field).toBeUndefined();
  });

  it('turns an error field into an OAuth-error PlatformError even with HTTP 200', () => {
    const error = endpointError(() =>
      parseTokenResponse(
        { ...valid, error: 'invalid_grant', error_description: 'code expired' },
        STARTED_AT,
        exchange,
      ),
    );
    expect(error.code).toBe('ERR_PLATFORM_INVALID_GRANT');
    expect(error.oauthError).toBe('invalid_grant');
    expect(error.oauthErrorDescription).toBe('code expired');
    expect(error.httpStatus).toBe(200);
  });

  it('ignores an error field that is null or empty', () => {
    expect(parseTokenResponse({ ...valid, error: null }, STARTED_AT, exchange).openId).toBe(
      'player-ada',
    );
    expect(parseTokenResponse({ ...valid, error: '' }, STARTED_AT, exchange).openId).toBe(
      'player-ada',
    );
  });
});

describe('parseScope', () => {
  it.each<[string | undefined, string[]]>([
    ['user_info,basic_actions', ['user_info', 'basic_actions']],
    [' user_info , basic_actions ,, user_info,', ['user_info', 'basic_actions']],
    ['user_info basic_actions', ['user_info', 'basic_actions']],
    ['SCOPE', ['SCOPE']],
    ['', []],
    [' , ', []],
    [undefined, []],
  ])('splits %p into %p', (scope, expected) => {
    expect(parseScope(scope)).toEqual(expected);
  });
});

describe('parseOAuthErrorBody', () => {
  it('finds an own error field and its description', () => {
    expect(parseOAuthErrorBody({ error: 'invalid_client', error_description: 'bad' })).toEqual({
      error: 'invalid_client',
      errorDescription: 'bad',
    });
  });

  it('finds nothing in a token response, a non-object or an inherited error field', () => {
    expect(parseOAuthErrorBody(valid)).toBeUndefined();
    expect(parseOAuthErrorBody(['error'])).toBeUndefined();
    expect(parseOAuthErrorBody(Object.create({ error: 'invalid_grant' }))).toBeUndefined();
  });
});

describe('interpretTokenAnswer', () => {
  it('returns the TokenSet of a 200 JSON token response', () => {
    const tokens = interpretTokenAnswer(answer(200, JSON.stringify(valid)), STARTED_AT, exchange);
    expect(tokens.openId).toBe('player-ada');
  });

  it('parses JSON whatever the content type claims', () => {
    const tokens = interpretTokenAnswer(
      answer(200, JSON.stringify(valid), 'text/plain; charset=utf-8'),
      STARTED_AT,
      exchange,
    );
    expect(tokens.openId).toBe('player-ada');
  });

  it.each([
    [400, 'invalid_grant', 'ERR_PLATFORM_INVALID_GRANT'],
    [401, 'invalid_client', 'ERR_PLATFORM_INVALID_CLIENT'],
    [400, 'invalid_request', 'ERR_PLATFORM_REFUSED'],
    [503, 'temporarily_unavailable', 'ERR_PLATFORM_REFUSED'],
  ])(
    'turns HTTP %i with an OAuth %s body into an OAuth-error PlatformError',
    (status, oauthError, code) => {
      const error = endpointError(() =>
        interpretTokenAnswer(
          answer(status, JSON.stringify({ error: oauthError, error_description: 'Nope.' })),
          STARTED_AT,
          refresh,
        ),
      );
      expect(error.code).toBe(code);
      expect(error.oauthError).toBe(oauthError);
      expect(error.oauthErrorDescription).toBe('Nope.');
      expect(error.httpStatus).toBe(status);
      expect(error.message).toContain('refresh_token request');
    },
  );

  it('sanitises and bounds an error_description', () => {
    const error = endpointError(() =>
      interpretTokenAnswer(
        answer(
          400,
          JSON.stringify({ error: 'invalid_grant', error_description: `a\n"b"${'x'.repeat(500)}` }),
        ),
        STARTED_AT,
        exchange,
      ),
    );
    expect(error.oauthErrorDescription).toMatch(/^abx+$/);
    expect(error.oauthErrorDescription).toHaveLength(200);
  });

  it.each<[number, string, string, RegExp]>([
    [
      503,
      'Service Unavailable',
      'text/plain',
      /HTTP 503 and a body that is not JSON \(content-type text\/plain\)/,
    ],
    [500, '<html><body>Oops</body></html>', 'text/html', /HTTP 500 and an HTML page/],
    [502, '', 'text/plain', /HTTP 502 and an empty body/],
    [500, '{"message":"internal"}', 'application/json', /HTTP 500 and JSON without an OAuth error/],
    [429, '[1,2]', 'application/json', /HTTP 429 and JSON that is not an object/],
    [404, 'Not Found', '', /HTTP 404 and a body that is not JSON \(content-type none\)/],
  ])(
    'turns HTTP %i without an OAuth error body into an ERR_PLATFORM_INVALID_RESPONSE PlatformError',
    (status, body, type, message) => {
      const error = refusal(() =>
        interpretTokenAnswer(answer(status, body, type), STARTED_AT, refresh),
      );
      expect(error.httpStatus).toBe(status);
      expect(error.message).toMatch(message);
    },
  );

  it.each<[string, string | Uint8Array, string, RegExp]>([
    [
      'an HTML page',
      '<!doctype html><title>Login</title>',
      'text/html; charset=utf-8',
      /an HTML page instead of JSON/,
    ],
    [
      'garbage',
      '{"access_token": "at-1", ',
      'application/json',
      /not JSON \(content-type application\/json\)/,
    ],
    ['an empty body', '', 'application/json', /an empty body/],
    ['only whitespace', ' \r\n ', 'application/json', /an empty body/],
    [
      'bytes that are not UTF-8',
      new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
      'application/json',
      /not JSON/,
    ],
    ['a JSON string', '"at-1"', 'application/json', /not a JSON object/],
    ['JSON null', 'null', 'application/json', /not a JSON object/],
  ])('refuses a 200 with %s', (_label, body, type, message) => {
    const error = refusal(() =>
      interpretTokenAnswer(answer(200, body, type), STARTED_AT, exchange),
    );
    expect(error.httpStatus).toBe(200);
    expect(error.message).toMatch(message);
  });

  it('turns a 200 with an error field into an OAuth-error PlatformError', () => {
    const error = endpointError(() =>
      interpretTokenAnswer(answer(200, '{"error":"invalid_client"}'), STARTED_AT, exchange),
    );
    expect(error.code).toBe('ERR_PLATFORM_INVALID_CLIENT');
    expect(error.httpStatus).toBe(200);
  });

  it('refuses a redirect without looking at its body', () => {
    const error = refusal(() =>
      interpretTokenAnswer(answer(302, JSON.stringify(valid)), STARTED_AT, exchange),
    );
    expect(error.httpStatus).toBe(302);
    expect(error.message).toMatch(/redirect \(HTTP 302\), which is not followed\. Check authUrl/);
  });

  it('reduces a hostile content type to harmless characters', () => {
    const error = refusal(() =>
      interpretTokenAnswer(answer(200, 'x', 'text/evil\r\n"<script>'), STARTED_AT, exchange),
    );
    expect(error.message).toContain('content-type text/evilscript');
  });
});
