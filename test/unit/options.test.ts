// The options of every public entry point: one strict schema each, refused at creation with an
// SetupError (ERR_PLATFORM_INVALID_OPTION) that names the option and never quotes its value.
import {
  SetupError,
  MemoryTokenStore,
  platformLogin,
  type PlatformLoginOptions,
} from 'express-platform-login';
import { startSimulator } from 'express-platform-login/simulator';
import { CANARY_REGISTRATION, CANARY_SECRET } from '../helpers/test-app';

const SECRET = CANARY_SECRET;
const base: PlatformLoginOptions = {
  ...CANARY_REGISTRATION,
  // Report mode said on purpose: no warning about unchecked entries on the tests' output.
  entry: { context: { mode: 'report' } },
};

/** The SetupError that `create` throws. */
function refusal(create: () => unknown): SetupError {
  try {
    create();
  } catch (error) {
    expect(error).toBeInstanceOf(SetupError);
    expect((error as SetupError).code).toBe('ERR_PLATFORM_INVALID_OPTION');
    expect((error as Error).message).not.toContain(SECRET);
    return error as SetupError;
  }
  throw new Error('expected the options to be refused');
}

describe('platformLogin() refuses at creation what the token client would refuse later', () => {
  test.each<[string, Partial<PlatformLoginOptions>, string, string]>([
    [
      'a redirectUri with a #fragment',
      { redirectUri: 'https://game.example/platform/callback#entry' },
      'redirectUri',
      'must be an absolute http(s) URL without a fragment, at most 2048 characters',
    ],
    [
      'tokenClient.timeoutMs above 300000',
      { tokenClient: { timeoutMs: 400_000 } },
      'tokenClient.timeoutMs',
      'must be an integer number of milliseconds from 1 to 300000',
    ],
    [
      'a 600-character clientId',
      { clientId: 'c'.repeat(600) },
      'clientId',
      'must be a non-empty string of at most 512 characters without control characters',
    ],
    [
      'an authUrl with a query',
      { authUrl: 'https://auth.platform.example/?tenant=1' },
      'authUrl',
      'must be an absolute http(s) URL without credentials, query or fragment',
    ],
  ])('%s', (_label, options, option, allowed) => {
    const error = refusal(() => platformLogin({ ...base, ...options }));
    expect(error.option).toBe(option);
    expect(error.message).toBe(`platformLogin(): \`${option}\` ${allowed}.`);
    expect(error.message).not.toContain('PlatformTokenClient');
  });

  test('every tuning option of the token client is accepted and reaches the client', () => {
    const login = platformLogin({
      ...base,
      tokenClient: { timeoutMs: 1000, refreshRetries: 1, maxRetryDelayMs: 500 },
    });
    expect(login.client.longestRefreshMs).toBe(1000 * 2 + 500);
  });

  test('a tuning option given as undefined keeps its default', () => {
    const login = platformLogin({ ...base, tokenClient: { timeoutMs: undefined } });
    expect(login.client.longestRefreshMs).toBe(5000 * 3 + 2000 * 2);
  });
});

describe('unknown options are refused with a "did you mean"', () => {
  test.each<[string, () => unknown, string]>([
    [
      'platformLogin()',
      () => platformLogin({ ...base, refresh: { skew: 30 } } as never),
      'platformLogin(): unknown option `refresh.skew` (did you mean `refresh.skewSeconds`?).',
    ],
    [
      'platformLogin() api',
      () => platformLogin({ ...base, api: { timeout: 300 } } as never),
      'platformLogin(): unknown option `api.timeout` (did you mean `api.timeoutMs`?).',
    ],
    [
      'platformLogin() tokenClient',
      () => platformLogin({ ...base, tokenClient: { timeout: 300 } } as never),
      'platformLogin(): unknown option `tokenClient.timeout` (did you mean `tokenClient.timeoutMs`?).',
    ],
    [
      'platformLogin() entry.context',
      () => platformLogin({ ...base, entry: { context: { mdoe: 'report' } } } as never),
      'platformLogin(): unknown option `entry.context.mdoe` (did you mean `entry.context.mode`?).',
    ],
    [
      'login.middleware()',
      () => platformLogin(base).middleware({ optinal: true } as never),
      'login.middleware(): unknown option `optinal` (did you mean `optional`?).',
    ],
    [
      'login.logout()',
      () => platformLogin(base).logout({ redirect: '/x' } as never),
      'login.logout(): unknown option `redirect` (did you mean `redirectTo`?).',
    ],
    [
      'MemoryTokenStore',
      () => new MemoryTokenStore({ maxEntry: 5 } as never),
      'MemoryTokenStore: unknown option `maxEntry` (did you mean `maxEntries`?).',
    ],
  ])('%s', (_entry, create, message) => {
    expect(refusal(create).message).toBe(message);
  });

  test('a flat option of 0.x says where it moved (CHANGELOG.md has the table)', () => {
    const error = refusal(() =>
      platformLogin({ ...base, refreshSkewSeconds: 30, apiUrl: 'https://api.example' } as never),
    );
    expect(error.option).toBe('refreshSkewSeconds');
    expect(error.message).toBe(
      'platformLogin(): `refreshSkewSeconds` moved to `refresh.skewSeconds`; `apiUrl` moved to `api.url` (see CHANGELOG.md).',
    );
  });

  test("a grouped option's wrong value is named by its path", () => {
    expect(() => platformLogin({ ...base, entry: { maxCodeLength: 8 } })).toThrow(
      'platformLogin(): `entry.maxCodeLength` must be an integer from 16 to 4096.',
    );
  });

  test('without a look-alike, the known options are listed', () => {
    expect(refusal(() => platformLogin(base).middleware({ colour: 1 } as never)).message).toBe(
      'login.middleware(): unknown option `colour` (known options: optional).',
    );
  });
});

describe('wrong values', () => {
  test('middleware({ optional }) must be a boolean', () => {
    const error = refusal(() => platformLogin(base).middleware({ optional: 'yes' } as never));
    expect(error.message).toBe('login.middleware(): `optional` must be a boolean.');
  });

  test('a missing required option says so', () => {
    const { clientSecret: _omitted, ...rest } = base;
    const error = refusal(() => platformLogin(rest as PlatformLoginOptions));
    expect(error.option).toBe('clientSecret');
    expect(error.message).toContain('`clientSecret` is required and must be');
  });

  test('embedded without platformOrigins names platformOrigins', () => {
    const error = refusal(() => platformLogin({ ...base, embedded: true }));
    expect(error.option).toBe('platformOrigins');
    expect(error.message).toMatch(
      /^platformLogin\(\): `platformOrigins` is required when `embedded` is true/,
    );
  });

  test('frameAncestors() without platformOrigins names platformOrigins', () => {
    expect(refusal(() => platformLogin(base).frameAncestors()).option).toBe('platformOrigins');
  });

  test('a fault is judged against its own kind: no suggestion from another kind', async () => {
    const sim = await startSimulator();
    try {
      expect(refusal(() => sim.injectFault({ kind: 'hang', ms: 1 } as never)).message).toBe(
        'injectFault: unknown option `ms` (known options: kind).',
      );
      expect(
        refusal(() => sim.injectFault({ kind: 'status', status: 500, stauts: 1 } as never)).message,
      ).toBe('injectFault: unknown option `stauts` (did you mean `status`?).');
    } finally {
      await sim.close();
    }
  });

  test("the simulator's options use the same error", async () => {
    await expect(startSimulator({ prot: 4000 } as never)).rejects.toMatchObject({
      name: 'SetupError',
      code: 'ERR_PLATFORM_INVALID_OPTION',
      option: 'prot',
      message: 'startSimulator: unknown option `prot` (did you mean `port`?).',
    });
  });
});
