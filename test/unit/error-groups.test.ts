// Errors are grouped by where they failed; each group's class carries its stable codes, so code
// that catches a group and switches on `err.code` sees every case (and TypeScript narrows it).
import {
  CodeAlreadyUsedError,
  CodeRejectedError,
  CookiesRefusedError,
  CrossOriginRequestError,
  EntryContextRefusedError,
  EntryDeniedError,
  IdentityChangedError,
  invalidOption,
  InvalidRequestError,
  isPlatformLoginError,
  MethodNotAllowedError,
  PlatformBusyError,
  ReauthRequiredError,
  RequestRefusedError,
  SessionMissingError,
  SetupError,
  TooManyEntriesError,
  type AnyPlatformLoginError,
} from '../../lib/errors';

test('every refusal of the request itself is a RequestRefusedError, told apart by its code', () => {
  const refusals = [
    new InvalidRequestError('no code'),
    new CodeAlreadyUsedError(),
    new EntryDeniedError('access_denied'),
    new CodeRejectedError(),
    new EntryContextRefusedError('direct-navigation'),
    new CookiesRefusedError(),
    new TooManyEntriesError(60),
    new PlatformBusyError(),
    new MethodNotAllowedError('POST'),
    new CrossOriginRequestError(),
  ];
  for (const error of refusals) expect(error).toBeInstanceOf(RequestRefusedError);
  expect(new Set(refusals.map((error) => error.code)).size).toBe(refusals.length);
});

test('a changed identity ends the login as reauth_required; a missing session is a setup error', () => {
  expect(new IdentityChangedError()).toBeInstanceOf(ReauthRequiredError);
  expect(new IdentityChangedError()).toMatchObject({
    code: 'ERR_PLATFORM_IDENTITY_CHANGED',
    status: 401,
    error: 'reauth_required',
  });
  expect(new ReauthRequiredError().code).toBe('ERR_PLATFORM_REAUTH_REQUIRED');
  expect(new SessionMissingError()).toBeInstanceOf(SetupError);
  expect(new SessionMissingError()).toMatchObject({
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
        return known.retryAfterSeconds; // only TooManyEntriesError has it among the refusals
      case 'ERR_PLATFORM_UNAVAILABLE':
        return known.retryAfterSeconds;
      default:
        return undefined;
    }
  };
  expect(retryAfter(new TooManyEntriesError(42))).toBe(42);
  expect(retryAfter(new CodeAlreadyUsedError())).toBeUndefined();
});
