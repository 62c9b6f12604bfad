// Option parsing of PlatformTokenClient: defaults, and a SetupError (`ERR_PLATFORM_INVALID_OPTION`)
// naming each wrong option.
import { PlatformTokenClient } from '../../lib/client/token-client';
import { SetupError } from '../../lib/errors';
import {
  parseTokenClientOptions,
  type PlatformTokenClientOptions,
} from '../../lib/client/token-client-options';
import { CANARY_REGISTRATION, CANARY_SECRET } from '../helpers/test-app';

const SECRET = CANARY_SECRET;
const base: PlatformTokenClientOptions = CANARY_REGISTRATION;

function refusalOf(options: unknown): SetupError {
  try {
    parseTokenClientOptions(options);
  } catch (error) {
    expect(error).toBeInstanceOf(SetupError);
    expect((error as SetupError).code).toBe('ERR_PLATFORM_INVALID_OPTION');
    return error as SetupError;
  }
  throw new Error('expected the options to be refused');
}

describe('parseTokenClientOptions', () => {
  it('fills in every default', () => {
    const config = parseTokenClientOptions(base);
    expect(config).toEqual({
      ...base,
      answerStyle: 'oauth',
      answerCodes: {},
      bodyEncoding: 'form',
      refreshParameterPlacement: 'body',
      sendClientCredentialsOnRefresh: true,
      timeoutMs: 5000,
      maxResponseBytes: 65_536,
      maxExpiresInSeconds: 86_400,
      refreshRetries: 2,
      retryBaseDelayMs: 200,
      maxRetryDelayMs: 2000,
    });
  });

  it('keeps an explicit 0 instead of replacing it with the default', () => {
    const config = parseTokenClientOptions({ ...base, refreshRetries: 0, retryBaseDelayMs: 0 });
    expect(config.refreshRetries).toBe(0);
    expect(config.retryBaseDelayMs).toBe(0);
  });

  it('accepts an injected fetch', () => {
    const fakeFetch = (async () => new Response('{}')) as typeof fetch;
    expect(parseTokenClientOptions({ ...base, fetch: fakeFetch }).fetch).toBe(fakeFetch);
  });

  it('refuses something that is not an options object', () => {
    for (const options of [null, 'https://auth.example', []]) {
      expect(refusalOf(options).message).toBe(
        'PlatformTokenClient: the options must be an object.',
      );
    }
    expect(refusalOf(undefined).message).toContain('`authUrl` is required and must be');
  });

  it.each<[string, unknown, RegExp]>([
    ['authUrl', 'auth.platform.example', /http\(s\) URL/],
    ['authUrl', 'ftp://auth.platform.example', /http\(s\) URL/],
    [
      'authUrl',
      'https://auth.platform.example/?tenant=1',
      /without credentials, query or fragment/,
    ],
    ['authUrl', 'https://auth.platform.example/#x', /without credentials, query or fragment/],
    ['authUrl', 'https://user:pw@auth.platform.example', /without credentials/],
    ['clientId', '', /non-empty string/],
    ['clientId', 'demo\ngame', /without control characters/],
    ['clientSecret', '', /non-empty string/],
    ['clientSecret', 42, /non-empty string/],
    ['redirectUri', '/platform/callback', /absolute http\(s\) URL/],
    ['redirectUri', 'https://game.example/cb#frag', /without a fragment/],
    ['bodyEncoding', 'xml', /'form' or 'json'/],
    ['refreshParameterPlacement', 'header', /'body' or 'query'/],
    ['sendClientCredentialsOnRefresh', 'yes', /a boolean/],
    ['timeoutMs', 0, /from 1 to 300000/],
    ['timeoutMs', 1.5, /integer/],
    ['maxResponseBytes', -1, /from 1 to 16777216/],
    ['maxExpiresInSeconds', 0, /from 1 to/],
    ['refreshRetries', 6, /from 0 to 5/],
    ['retryBaseDelayMs', -5, /from 0 to 60000/],
    ['maxRetryDelayMs', Number.NaN, /from 0 to 60000/],
    ['fetch', 'fetch', /fetch-compatible function/],
  ])('names %s when it is %p', (name, value, allowed) => {
    const error = refusalOf({ ...base, [name]: value });
    expect(error.message).toContain(`PlatformTokenClient: \`${name}\` must be`);
    expect(error.option).toBe(name);
    expect(error.message).toMatch(allowed);
  });

  it.each(['authUrl', 'clientId', 'clientSecret', 'redirectUri'] as const)(
    'says that %s is required',
    (name) => {
      const options: Record<string, unknown> = { ...base };
      delete options[name];
      expect(refusalOf(options).message).toContain(`\`${name}\` is required and must be`);
    },
  );

  it('refuses an unknown option, naming it and the likely intended one', () => {
    const error = refusalOf({ ...base, timeout: 300 });
    expect(error.message).toBe(
      'PlatformTokenClient: unknown option `timeout` (did you mean `timeoutMs`?).',
    );
    expect(error.option).toBe('timeout');
  });

  it('refuses an unknown option with no look-alike, listing the known ones', () => {
    const error = refusalOf({ ...base, colour: 'blue' });
    expect(error.message).toContain('unknown option `colour` (known options: authUrl, clientId');
    expect(error.message).not.toContain('did you mean');
    expect(error.message).toContain('redirectUri');
  });

  it('never quotes the value of a refused option', () => {
    const error = refusalOf({ ...base, clientSecret: { value: SECRET } });
    expect(error.message).not.toContain(SECRET);
    const badUrl = refusalOf({ ...base, authUrl: `https://x.example/?secret=${SECRET}` });
    expect(badUrl.message).not.toContain(SECRET);
  });
});

describe('PlatformTokenClient construction', () => {
  it('throws the SetupError from its constructor', () => {
    expect(() => new PlatformTokenClient({ ...base, bodyEncoding: 'xml' as 'json' })).toThrow(
      "PlatformTokenClient: `bodyEncoding` must be 'form' or 'json'.",
    );
  });

  it('says how long one refresh can take at most: every attempt timing out, plus the backoff', () => {
    expect(new PlatformTokenClient(base).longestRefreshMs).toBe(5000 * 3 + 2000 * 2);
    const tuned = new PlatformTokenClient({
      ...base,
      timeoutMs: 1000,
      refreshRetries: 0,
      maxRetryDelayMs: 9000,
    });
    expect(tuned.longestRefreshMs).toBe(1000);
  });

  it.each([
    ['https://auth.platform.example', 'https://auth.platform.example/token'],
    ['https://auth.platform.example/', 'https://auth.platform.example/token'],
    ['https://auth.platform.example/oauth2//', 'https://auth.platform.example/oauth2/token'],
    ['http://127.0.0.1:4000', 'http://127.0.0.1:4000/token'],
  ])('derives the token endpoint from %s', (authUrl, tokenEndpoint) => {
    expect(new PlatformTokenClient({ ...base, authUrl }).tokenEndpoint).toBe(tokenEndpoint);
  });

  it('refuses an empty code or refresh token before sending anything', async () => {
    let calls = 0;
    const client = new PlatformTokenClient({
      ...base,
      fetch: (async () => {
        calls += 1;
        return new Response('{}');
      }) as typeof fetch,
    });
    await expect(client.exchangeCode('')).rejects.toThrow(TypeError);
    await expect(client.refresh(undefined as unknown as string)).rejects.toThrow(TypeError);
    expect(calls).toBe(0);
  });
});
