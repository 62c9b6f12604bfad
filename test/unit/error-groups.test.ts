// Errors are grouped by what the caller does next; each family's class carries its stable codes, so
// code that catches a family and switches on `err.code` sees every case (and TypeScript narrows it).
import {
  type AnyPlatformLoginError,
  codeAlreadyUsed,
  codeRejected,
  cookiesRefused,
  crossOriginRequest,
  entryContextRefused,
  entryDenied,
  entryRefused,
  httpAnswer,
  identityChanged,
  insufficientScope,
  invalidOption,
  invalidRequest,
  invalidTokenResponse,
  isPlatformLoginError,
  LoginRequiredError,
  methodNotAllowed,
  PLATFORM_ERROR_CODES,
  PLATFORM_ERRORS,
  platformBusy,
  PlatformError,
  PlatformLoginError,
  platformUnavailable,
  reauthRequired,
  RequestRefusedError,
  sessionMissing,
  SetupError,
  StoreUnavailableError,
  tokenEndpointRefused,
  tooManyEntries,
} from '../../lib/errors';

/** One of each refusal of the request itself, as the package makes them. */
const refusals = (): RequestRefusedError[] => [
  invalidRequest('no code'),
  codeAlreadyUsed(),
  entryDenied('access_denied'),
  codeRejected(),
  entryContextRefused('direct-navigation'),
  cookiesRefused(),
  tooManyEntries(60),
  platformBusy(),
  methodNotAllowed('POST'),
  crossOriginRequest(),
  insufficientScope(['friends']),
  entryRefused(),
];

test('every refusal of the request itself is a RequestRefusedError, told apart by its code', () => {
  for (const error of refusals()) expect(error).toBeInstanceOf(RequestRefusedError);
  expect(new Set(refusals().map((error) => error.code)).size).toBe(refusals().length);
});

test('a changed identity ends the login as reauth_required; a missing session is a setup error', () => {
  expect(identityChanged()).toBeInstanceOf(LoginRequiredError);
  expect(identityChanged()).toMatchObject({
    code: 'ERR_PLATFORM_IDENTITY_CHANGED',
    status: 401,
    error: 'reauth_required',
  });
  expect(reauthRequired().code).toBe('ERR_PLATFORM_REAUTH_REQUIRED');
  expect(reauthRequired()).toMatchObject({ status: 401, error: 'reauth_required' });
  expect(reauthRequired()).toBeInstanceOf(LoginRequiredError);
  expect(new LoginRequiredError()).toMatchObject({
    code: 'ERR_PLATFORM_LOGIN_REQUIRED',
    status: 401,
    error: 'login_required',
  });
  expect(sessionMissing()).toBeInstanceOf(SetupError);
  expect(sessionMissing()).toMatchObject({
    code: 'ERR_PLATFORM_SESSION_MISSING',
    status: 500,
    error: 'server_misconfigured',
  });
  expect(new SetupError('x').code).toBe('ERR_PLATFORM_SETUP');
});

test('a refusal at creation is a SetupError naming the option, in its JSON too', () => {
  const refusal = invalidOption('platformLogin(): `store` lacks a part.', 'store');
  expect(refusal).toBeInstanceOf(SetupError);
  expect(refusal).toMatchObject({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'store' });
  expect(refusal.toJSON()).toMatchObject({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'store' });
  expect(new SetupError('x').toJSON()).not.toHaveProperty('option');
});

test('switch (err.code) narrows to the class that carries the code', () => {
  const retryAfter = (err: unknown): number | undefined => {
    if (!isPlatformLoginError(err)) return undefined;
    const known: AnyPlatformLoginError = err;
    switch (known.code) {
      case 'ERR_PLATFORM_TOO_MANY_ENTRIES':
        return known.retryAfterSeconds; // with ERR_PLATFORM_BUSY, the refusals that carry it
      case 'ERR_PLATFORM_UNAVAILABLE':
        return known.retryAfterSeconds;
      default:
        return undefined;
    }
  };
  expect(retryAfter(tooManyEntries(42))).toBe(42);
  expect(retryAfter(codeAlreadyUsed())).toBeUndefined();
});

test('every family class takes the codes of its family in the table, and only those', () => {
  const family = {
    setup: SetupError,
    login: LoginRequiredError,
    refused: RequestRefusedError,
    platform: PlatformError,
    store: StoreUnavailableError,
  };
  const made: PlatformLoginError[] = [
    new SetupError('x'),
    invalidOption('x', 'store'),
    sessionMissing(),
    new LoginRequiredError(),
    reauthRequired(),
    identityChanged(),
    ...refusals(),
    tokenEndpointRefused({ oauthError: 'invalid_grant', httpStatus: 400, grant: 'refresh_token' }),
    tokenEndpointRefused({ oauthError: 'invalid_client', httpStatus: 401, grant: 'refresh_token' }),
    tokenEndpointRefused({ oauthError: 'slow_down', httpStatus: 400, grant: 'refresh_token' }),
    invalidTokenResponse('x'),
    new PlatformError('x', { code: 'ERR_PLATFORM_TIMEOUT' }),
    new PlatformError('x', { code: 'ERR_PLATFORM_NETWORK' }),
    platformUnavailable('x'),
    new PlatformError('x', { code: 'ERR_PLATFORM_MISCONFIGURED' }),
    new PlatformError('x', { code: 'ERR_PLATFORM_API_TIMEOUT' }),
    new PlatformError('x', { code: 'ERR_PLATFORM_API_UNREACHABLE' }),
    new StoreUnavailableError('x'),
  ];
  expect(made.map((error) => error.code).sort()).toEqual([...PLATFORM_ERROR_CODES].sort());
  for (const error of made) {
    const row = PLATFORM_ERRORS[error.code];
    expect(error).toBeInstanceOf(family[row.family]);
    expect(isPlatformLoginError(error)).toBe(true);
    if (error.code !== 'ERR_PLATFORM_ENTRY_DENIED') {
      expect(error).toMatchObject({ status: row.status, error: row.error });
      expect(httpAnswer(error)).toEqual({ status: row.status, error: row.error });
    }
  }
});

test.each([
  ['access_denied', 403, 'access_denied'],
  ['server_error', 502, 'server_error'],
  ['temporarily_unavailable', 503, 'temporarily_unavailable'],
  ['invalid_scope', 400, 'invalid_scope'],
  [undefined, 403, 'access_denied'],
  ['<script>', 400, 'script'],
])(
  "an entry the platform denied with %s is answered %i with the platform's error",
  (sent, status, error) => {
    expect(entryDenied(sent)).toMatchObject({ code: 'ERR_PLATFORM_ENTRY_DENIED', status, error });
    expect(httpAnswer(entryDenied(sent))).toEqual({ status, error });
  },
);

test("each error is logged at its code's level in the table; two cases say otherwise", () => {
  for (const error of [...refusals(), new LoginRequiredError(), new StoreUnavailableError('x')]) {
    if (error.code !== 'ERR_PLATFORM_ENTRY_DENIED') {
      expect(error.logLevel).toBe(PLATFORM_ERRORS[error.code].level);
    }
  }
  expect(invalidOption('x').logLevel).toBe('warn');
  expect(new StoreUnavailableError('x').logLevel).toBe('error');
  // The platform's own trouble at an entry is a 5xx, logged as one.
  expect(entryDenied('server_error')).toMatchObject({ status: 502, logLevel: 'error' });
  expect(entryDenied('access_denied')).toMatchObject({ status: 403, logLevel: 'debug' });
  // A redirect_uri the platform refused is the setup's mistake, not the player's.
  const said = (description: string) => ({ cause: { oauthErrorDescription: description } });
  expect(codeRejected(said('redirect_uri does not match')).logLevel).toBe('warn');
  expect(codeRejected(said('code expired')).logLevel).toBe('debug');
});
