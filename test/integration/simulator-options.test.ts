// Wrong options fail at once with the package's SetupError (`ERR_PLATFORM_INVALID_OPTION`), wrong
// control calls with a TypeError; each names what is wrong.
import {
  DEMO_PLAYERS,
  startSimulator,
  type PlatformSimulator,
} from 'express-platform-login/simulator';

describe('startSimulator options', () => {
  test.each([
    [{ port: -1 }, /`port`.*0 to 65535/],
    [{ port: 1.5 }, /`port`/],
    [{ accessTokenLifetimeSeconds: 0 }, /`accessTokenLifetimeSeconds`.*at least 1/],
    [{ codeLifetimeSeconds: '300' }, /`codeLifetimeSeconds`/],
    [{ rotateRefreshTokens: 'yes' }, /`rotateRefreshTokens`.*true or false/],
    [{ defaultRedirectUri: 'ftp://game.example/cb' }, /`defaultRedirectUri`.*http\(s\)/],
    [{ defaultRedirectUri: 'https://game.example/cb#frag' }, /`defaultRedirectUri`/],
    [{ clients: [] }, /`clients`.*at least one/],
    [{ clients: [{ clientId: 'a' }] }, /`clients\.0\.clientSecret`/],
    [
      {
        players: [
          { openId: 'x', nickname: 'X', scope: [] },
          { openId: 'x', nickname: 'Y', scope: [] },
        ],
      },
      /repeat an openId/,
    ],
    [{ prot: 4000 }, /unknown option `prot`/],
  ])('%j is refused', async (options, message) => {
    await expect(startSimulator(options as never)).rejects.toMatchObject({
      name: 'SetupError',
      code: 'ERR_PLATFORM_INVALID_OPTION',
    });
    await expect(startSimulator(options as never)).rejects.toThrow(message);
  });

  test('a defaultRedirectUri the first client did not register is refused', async () => {
    await expect(
      startSimulator({
        clients: [
          { clientId: 'game', clientSecret: 'secret', redirectUris: ['https://game.example/cb'] },
        ],
        defaultRedirectUri: 'https://other.example/cb',
      }),
    ).rejects.toThrow(/`defaultRedirectUri`/);
  });

  test('a secret never appears in the message', async () => {
    await expect(
      startSimulator({
        clients: [{ clientId: 'a', clientSecret: 'top-secret', redirectUris: ['nope'] }],
      }),
    ).rejects.toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('top-secret') }),
    );
  });

  test('a port in use is reported', async () => {
    const first = await startSimulator();
    try {
      const port = Number(new URL(first.url).port);
      await expect(startSimulator({ port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await first.close();
    }
  });

  test('DEMO_PLAYERS has three players and cannot be changed by accident', () => {
    expect(DEMO_PLAYERS.map((player) => player.openId)).toEqual([
      'player-ada',
      'player-bo',
      'player-cy',
    ]);
    expect(Object.isFrozen(DEMO_PLAYERS)).toBe(true);
  });
});

describe('control calls', () => {
  let simulator: PlatformSimulator;

  beforeAll(async () => {
    simulator = await startSimulator();
  });

  afterAll(async () => {
    await simulator.close();
  });

  test('url has no trailing slash and points at loopback', () => {
    expect(simulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test('issueCode refuses an unknown player or client and a bad redirect_uri', () => {
    expect(() => simulator.issueCode({ openId: 'nobody' })).toThrow(
      new TypeError('issueCode: unknown open_id.'),
    );
    expect(() => simulator.issueCode({ clientId: 'nobody' })).toThrow(/unknown client_id/);
    expect(() => simulator.issueCode({ redirectUri: 'not a url' })).toThrow(/redirect_uri must be/);
  });

  test('setAccessTokenLifetime, advanceClock and setRotation check their argument', () => {
    expect(() => simulator.setAccessTokenLifetime(0)).toThrow(/at least 1/);
    expect(() => simulator.setAccessTokenLifetime(1.5)).toThrow(TypeError);
    expect(() => simulator.advanceClock(-1)).toThrow(/0 or more/);
    expect(() => simulator.advanceClock(Number.NaN)).toThrow(TypeError);
    expect(() => simulator.setRotation('on' as never)).toThrow(TypeError);
  });

  test('advanceClock moves now() forward by that many seconds', () => {
    const before = simulator.now();
    simulator.advanceClock(3600);
    expect(simulator.now() - before).toBeGreaterThanOrEqual(3600 * 1000);
    expect(simulator.now() - before).toBeLessThan(3600 * 1000 + 60_000);
  });

  test('close() can be called twice', async () => {
    const extra = await startSimulator();
    await extra.close();
    await expect(extra.close()).resolves.toBeUndefined();
  });
});
