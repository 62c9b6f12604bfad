// The registrations of one platformLogin(): names and callback paths that must not repeat, said at
// creation without the secrets; `callbackFor`; and how a player is named to logoutPlayer,
// sessionsOf and forPlayer.
import { platformLogin, SetupError, type PlatformLoginOptions } from 'express-platform-login';
import { playerKeyOfRef } from '../../lib/registrations/player-ref';
import { registrationsOf } from '../../lib/registrations/registration-options';
import { parsePlatformLoginOptions } from '../../lib/options';

const SECRET = 'canary-secret-5e1a';
const base: PlatformLoginOptions = {
  authUrl: 'https://auth.platform.example',
  clientId: 'web-game',
  clientSecret: SECRET,
  redirectUri: 'https://game.example/platform/callback',
  entry: { context: { mode: 'report' } },
  registrationName: 'web',
};
const mini = {
  name: 'mini',
  clientId: 'mini-game',
  clientSecret: SECRET,
  redirectUri: 'https://game.example/platform/mini/callback',
};

function refusal(options: PlatformLoginOptions): SetupError {
  try {
    platformLogin(options);
  } catch (error) {
    expect(error).toBeInstanceOf(SetupError);
    expect((error as Error).message).not.toContain(SECRET);
    return error as SetupError;
  }
  throw new Error('expected the options to be refused');
}

test('a repeated name, or a callback path another registration has, is refused at creation', () => {
  expect(refusal({ ...base, registrations: [{ ...mini, name: 'web' }] }).message).toMatch(
    /registrations\.0\.name.*must not repeat a name/,
  );
  expect(
    refusal({
      ...base,
      registrations: [{ ...mini, redirectUri: 'https://other.example/Platform/Callback/' }],
    }).message,
  ).toMatch(/registrations\.0\.redirectUri.*path of its own/);
  expect(refusal({ ...base, registrations: [{ ...mini, name: 'no spaces' }] }).message).toMatch(
    /registrations\.0\.name/,
  );
});

test('a redirectUri that is a path, not a URL, is refused naming it, first or further', () => {
  expect(refusal({ ...base, redirectUri: '/platform/callback' }).option).toBe('redirectUri');
  const further = { ...mini, redirectUri: '/platform/mini/callback' };
  expect(refusal({ ...base, registrations: [further] }).option).toBe('registrations.0.redirectUri');
});

test('callbackFor names each configured registration; callback is the first one', () => {
  const login = platformLogin({ ...base, registrations: [mini] });
  expect(login.callbackFor('web')).toBe(login.callback);
  expect(login.callbackFor('mini')).not.toBe(login.callback);
  expect(() => login.callbackFor('app')).toThrow(TypeError);
});

test('a player is an openId of the first registration, { unionId } or { openId, registration }', () => {
  const registrations = registrationsOf(
    parsePlatformLoginOptions({ ...base, registrations: [mini] }),
  );
  expect(playerKeyOfRef('ada', registrations, 'logoutPlayer')).toBe('ada');
  expect(playerKeyOfRef({ openId: 'ada', registration: 'web' }, registrations, 'x')).toBe('ada');
  expect(playerKeyOfRef({ openId: 'ada', registration: 'mini' }, registrations, 'x')).toBe(
    'r:mini:ada',
  );
  expect(playerKeyOfRef({ unionId: 'u1' }, registrations, 'x')).toBe('u:u1');
  for (const wrong of ['', { openId: 'ada', registration: 'app' }, { unionId: '' }, null])
    expect(() => playerKeyOfRef(wrong as never, registrations, 'forPlayer')).toThrow(
      /login\.forPlayer\(player\)/,
    );
});
