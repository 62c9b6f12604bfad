// The one failure policy: what a token-endpoint failure becomes, which errors end a login, and when
// a request goes on with the token it has.
import {
  answerForTokenFailure,
  endsLogin,
  failedOnItsCode,
  platformRetryAfterSeconds,
  servesWithCurrentToken,
} from '../../lib/core/failure-policy';
import {
  codeAlreadyUsed,
  codeRejected,
  identityChanged,
  invalidRequest,
  invalidTokenResponse,
  LoginRequiredError,
  PlatformError,
  type PlatformLoginError,
  platformUnavailable,
  reauthRequired,
  StoreUnavailableError,
  tokenEndpointRefused,
} from '../../lib/errors';
import { sampleRecord } from 'express-platform-login/testing';

const refused = (oauthError: string, httpStatus = 400): PlatformError =>
  tokenEndpointRefused({ oauthError, httpStatus, grant: 'refresh_token' });

describe('answerForTokenFailure', () => {
  test.each([
    [
      'invalid_grant at an entry',
      refused('invalid_grant'),
      'authorization_code',
      400,
      'code_rejected',
    ],
    [
      'invalid_grant on a refresh',
      refused('invalid_grant'),
      'refresh_token',
      401,
      'reauth_required',
    ],
    [
      'invalid_client at an entry',
      refused('invalid_client', 401),
      'authorization_code',
      503,
      'platform_misconfigured',
    ],
    [
      'invalid_client on a refresh',
      refused('invalid_client', 401),
      'refresh_token',
      503,
      'platform_misconfigured',
    ],
    [
      'a timeout at an entry',
      new PlatformError('slow', { code: 'ERR_PLATFORM_TIMEOUT' }),
      'authorization_code',
      504,
      'platform_timeout',
    ],
    [
      'a timeout on a refresh',
      new PlatformError('slow', { code: 'ERR_PLATFORM_TIMEOUT' }),
      'refresh_token',
      503,
      'platform_unavailable',
    ],
    [
      'a store failure on a refresh',
      new StoreUnavailableError('down'),
      'refresh_token',
      503,
      'store_unavailable',
    ],
  ] as const)('%s: %i %s', (_name, error, grant, status, code) => {
    expect(answerForTokenFailure(error, grant, 5)).toMatchObject({ status, error: code });
  });

  test("a refresh's answer is typed as the package's error (no cast at the caller)", () => {
    const answer: PlatformLoginError = answerForTokenFailure(new Error('x'), 'refresh_token', 5);
    expect(answer).toBeInstanceOf(PlatformError);
    expect(answer).toHaveProperty('code', 'ERR_PLATFORM_UNAVAILABLE');
  });

  test("a refresh failure carries the platform's Retry-After (capped at 300 s), else the configured one", () => {
    const throttled = tokenEndpointRefused({
      oauthError: 'temporarily_unavailable',
      httpStatus: 429,
      grant: 'refresh_token',
      platformRetryAfterSeconds: 30,
    });
    expect(answerForTokenFailure(throttled, 'refresh_token', 5)).toMatchObject({
      retryAfterSeconds: 30,
    });
    const garbage = invalidTokenResponse('not JSON', {
      httpStatus: 503,
      platformRetryAfterSeconds: 86_400,
    });
    expect(platformRetryAfterSeconds(garbage)).toBe(300);
    expect(answerForTokenFailure(refused('server_error', 500), 'refresh_token', 7)).toMatchObject({
      retryAfterSeconds: 7,
    });
  });
});

test('endsLogin: only the errors after which the player must enter again', () => {
  expect(endsLogin(new LoginRequiredError())).toBe(true);
  expect(endsLogin(reauthRequired())).toBe(true);
  expect(endsLogin(identityChanged())).toBe(true);
  expect(endsLogin(platformUnavailable('down'))).toBe(false);
  expect(endsLogin(new StoreUnavailableError('down'))).toBe(false);
  expect(endsLogin({ status: 401 })).toBe(false);
});

test('servesWithCurrentToken: platform trouble with a token that has not expired', () => {
  const now = Date.now();
  const valid = { ...sampleRecord(1), accessExpiresAt: now + 30_000 };
  const expired = { ...sampleRecord(1), accessExpiresAt: now - 1 };
  const down = platformUnavailable('down');
  expect(servesWithCurrentToken(down, valid, now)).toBe(true);
  expect(servesWithCurrentToken(down, expired, now)).toBe(false);
  expect(servesWithCurrentToken(reauthRequired(), valid, now)).toBe(false);
});

describe('failedOnItsCode: what the failed-entry limit counts', () => {
  test.each([
    ['a malformed code', invalidRequest('bad'), true],
    ['a used code', codeAlreadyUsed(), true],
    ['invalid_grant', codeRejected(), true],
    ['invalid_request (400)', refused('invalid_request'), true],
    // The platform's rate limit holds entries with its wait instead (docs/answer-styles.md).
    ['a 429 with an OAuth body', refused('temporarily_unavailable', 429), false],
    ['a rate limit in a 200 body (slow_down)', refused('slow_down', 200), false],
    ['"busy, try again" in a 200 body', refused('temporarily_unavailable', 200), false],
    ['an OAuth error in a 200', refused('invalid_request', 200), true],
    ['a 403 with a text body', invalidTokenResponse('x', { httpStatus: 403 }), true],
    ["invalid_client: the game's own setup", refused('invalid_client', 401), false],
    ['a 503 with an OAuth body', refused('temporarily_unavailable', 503), false],
    ['a 500 with a text body', invalidTokenResponse('x', { httpStatus: 500 }), false],
    // An error object in a 200 body ({errcode, errmsg}, {err_no, err_msg}) is the platform's
    // refusal of the code, not its outage: a made-up code costs its address a count either way.
    ['a 200 that is not a token response', invalidTokenResponse('x', { httpStatus: 200 }), true],
    ['a redirect', invalidTokenResponse('x', { httpStatus: 302 }), true],
    ['a timeout', new PlatformError('slow', { code: 'ERR_PLATFORM_TIMEOUT' }), false],
    ['no connection', new PlatformError('down', { code: 'ERR_PLATFORM_NETWORK' }), false],
    ['a store outage', new StoreUnavailableError('down'), false],
  ])('%s: %s', (_name, error, counts) => {
    expect(failedOnItsCode(error)).toBe(counts);
  });
});
