// The simulator's token endpoint over real HTTP: the exchange and refresh rules, the platform's
// token states (an unexpired access token is renewed in place, an expired one replaced), parameter
// placements, client authentication and rotation.
import {
  DEMO_CLIENT_ID,
  DEMO_CLIENT_SECRET,
  startSimulator,
  type PlatformSimulator,
} from 'express-platform-login/simulator';
import {
  REDIRECT_URI,
  exchange,
  exchangeParams,
  login,
  postToken,
  refresh,
  userinfo,
  type Placement,
} from '../helpers/simulator-requests';

const DAY = 24 * 3600;
const PRINTABLE = /^[\x21-\x7e]+$/;

let simulator: PlatformSimulator;

beforeEach(async () => {
  simulator = await startSimulator();
});

afterEach(async () => {
  await simulator.close();
});

describe('code exchange (grant_type=authorization_code)', () => {
  test('a code issued for a player yields the platform token response', async () => {
    const code = simulator.issueCode({ openId: 'player-bo', redirectUri: REDIRECT_URI });
    const answer = await exchange(simulator, code);

    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({
      access_token: expect.stringMatching(PRINTABLE),
      expires_in: 7200,
      refresh_token: expect.stringMatching(PRINTABLE),
      open_id: 'player-bo',
      scope: 'user_info,basic_actions',
      unionid: 'union-bo',
    });
    expect(answer.body.access_token).not.toBe(answer.body.refresh_token);
    expect(code).toMatch(PRINTABLE);
    expect(simulator.calls.authorization_code).toBe(1);
  });

  test.each<Placement>(['form', 'json', 'query'])(
    'parameters are read from the %s',
    async (placement) => {
      const answer = await exchange(
        simulator,
        simulator.issueCode({ redirectUri: REDIRECT_URI }),
        {},
        placement,
      );
      expect(answer.status).toBe(200);
      expect(answer.body.open_id).toBe('player-ada');
    },
  );

  test('parameters split between the query string and the body are combined', async () => {
    const code = simulator.issueCode({ redirectUri: REDIRECT_URI });
    const response = await fetch(
      `${simulator.url}/token?grant_type=authorization_code&client_id=${DEMO_CLIENT_ID}`,
      {
        method: 'POST',
        body: new URLSearchParams({
          client_secret: DEMO_CLIENT_SECRET,
          code,
          redirect_uri: REDIRECT_URI,
        }),
      },
    );
    expect(response.status).toBe(200);
  });

  test('a parameter sent twice is refused as invalid_request', async () => {
    const code = simulator.issueCode({ redirectUri: REDIRECT_URI });
    const response = await fetch(`${simulator.url}/token?code=${code}`, {
      method: 'POST',
      body: new URLSearchParams(exchangeParams(code)),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'invalid_request',
      error_description: 'parameter code was sent more than once',
    });
  });

  test('a code works once; the second use is invalid_grant', async () => {
    const code = simulator.issueCode({ redirectUri: REDIRECT_URI });
    expect((await exchange(simulator, code)).status).toBe(200);

    const again = await exchange(simulator, code);
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      error: 'invalid_grant',
      error_description: 'authorization code was already used',
    });
    expect(simulator.calls.authorization_code).toBe(2);
  });

  test('a code expires after codeLifetimeSeconds (300 by default)', async () => {
    const inTime = simulator.issueCode({ redirectUri: REDIRECT_URI });
    const late = simulator.issueCode({ redirectUri: REDIRECT_URI });
    simulator.advanceClock(299);
    expect((await exchange(simulator, inTime)).status).toBe(200);
    simulator.advanceClock(1);

    const answer = await exchange(simulator, late);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'authorization code has expired',
    });
  });

  test('a custom codeLifetimeSeconds is honoured', async () => {
    const shortLived = await startSimulator({ codeLifetimeSeconds: 10 });
    try {
      const code = shortLived.issueCode({ redirectUri: REDIRECT_URI });
      shortLived.advanceClock(10);
      expect((await exchange(shortLived, code)).body.error).toBe('invalid_grant');
    } finally {
      await shortLived.close();
    }
  });

  test('an unknown code is invalid_grant', async () => {
    const answer = await exchange(simulator, 'not-a-code');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_grant');
  });

  test('a redirect_uri other than the one the code was issued for is invalid_grant', async () => {
    const code = simulator.issueCode({ redirectUri: REDIRECT_URI });
    const answer = await exchange(simulator, code, { redirect_uri: `${REDIRECT_URI}/other` });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: 'invalid_grant',
      error_description:
        'redirect_uri does not match the one the authorization code was issued for',
    });
  });

  test('a wrong client secret is 401 invalid_client and leaves the code usable', async () => {
    const code = simulator.issueCode({ redirectUri: REDIRECT_URI });
    const answer = await exchange(simulator, code, { client_secret: 'wrong-secret' });
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe('invalid_client');
    expect(JSON.stringify(answer.body)).not.toContain('wrong-secret');

    expect((await exchange(simulator, code)).status).toBe(200);
  });

  test('an unknown client_id is 401 invalid_client', async () => {
    const answer = await exchange(simulator, simulator.issueCode(), { client_id: 'someone-else' });
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe('invalid_client');
  });

  test('a code issued to another client is invalid_grant', async () => {
    const twoClients = await startSimulator({
      clients: [
        { clientId: 'game-a', clientSecret: 'secret-a' },
        { clientId: 'game-b', clientSecret: 'secret-b' },
      ],
    });
    try {
      const code = twoClients.issueCode({ clientId: 'game-a', redirectUri: REDIRECT_URI });
      const answer = await exchange(twoClients, code, {
        client_id: 'game-b',
        client_secret: 'secret-b',
      });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe('invalid_grant');
    } finally {
      await twoClients.close();
    }
  });

  test.each(['client_id', 'client_secret', 'code', 'redirect_uri'])(
    'a missing %s is invalid_request naming it',
    async (name) => {
      const answer = await exchange(simulator, simulator.issueCode(), { [name]: '' });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        error: 'invalid_request',
        error_description: `missing parameter ${name}`,
      });
    },
  );

  test('a missing grant_type is invalid_request, an unknown one unsupported_grant_type; both count as invalid', async () => {
    const missing = await postToken(simulator, { code: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');

    const unknown = await postToken(simulator, { grant_type: 'password' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('unsupported_grant_type');
    expect(simulator.calls).toEqual({
      authorization_code: 0,
      refresh_token: 0,
      invalid: 2,
      userinfo: 0,
    });
  });

  test('a body that is not JSON is invalid_request', async () => {
    const response = await fetch(`${simulator.url}/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"grant_type":',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
    expect(simulator.calls.invalid).toBe(1);
  });

  test('GET /token is 405', async () => {
    const response = await fetch(`${simulator.url}/token`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('token states: renewed in place while unexpired, replaced once expired', () => {
  test('access_token valid → time passes beyond expires_in → expired: the open API refuses it', async () => {
    const tokens = await login(simulator);
    simulator.advanceClock(7199);
    expect((await userinfo(simulator, tokens.access_token)).status).toBe(200);
    simulator.advanceClock(1);
    expect((await userinfo(simulator, tokens.access_token)).status).toBe(401);
  });

  test('access_token expired → refresh → a NEW access_token with a new expiry', async () => {
    const tokens = await login(simulator);
    simulator.advanceClock(7200);

    const answer = await refresh(simulator, tokens.refresh_token);
    expect(answer.status).toBe(200);
    expect(answer.body.access_token).not.toBe(tokens.access_token);
    expect(answer.body).toMatchObject({
      expires_in: 7200,
      open_id: 'player-ada',
      refresh_token: tokens.refresh_token,
    });
    expect((await userinfo(simulator, answer.body.access_token)).status).toBe(200);
    expect((await userinfo(simulator, tokens.access_token)).status).toBe(401);

    simulator.advanceClock(7199);
    expect((await userinfo(simulator, answer.body.access_token)).status).toBe(200);
  });

  test('access_token valid → refresh → the SAME access_token with its expiry renewed', async () => {
    const tokens = await login(simulator);
    simulator.advanceClock(7000);

    const answer = await refresh(simulator, tokens.refresh_token);
    expect(answer.status).toBe(200);
    expect(answer.body.access_token).toBe(tokens.access_token);
    expect(answer.body.expires_in).toBe(7200);

    // 14 000 s after the login: past the first expiry, inside the renewed one.
    simulator.advanceClock(7000);
    expect((await userinfo(simulator, tokens.access_token)).status).toBe(200);
    simulator.advanceClock(200);
    expect((await userinfo(simulator, tokens.access_token)).status).toBe(401);
  });

  test('refresh_token valid → 90 days pass → expired: refresh is invalid_grant', async () => {
    const tokens = await login(simulator);
    simulator.advanceClock(90 * DAY - 1);
    expect((await refresh(simulator, tokens.refresh_token)).status).toBe(200);

    simulator.advanceClock(1);
    const answer = await refresh(simulator, tokens.refresh_token);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_grant');
    expect(simulator.calls.refresh_token).toBe(2);
  });
});

describe('refresh (grant_type=refresh_token)', () => {
  test.each<Placement>(['form', 'json', 'query'])(
    'parameters are read from the %s',
    async (placement) => {
      const tokens = await login(simulator);
      const answer = await refresh(
        simulator,
        tokens.refresh_token,
        {
          client_id: DEMO_CLIENT_ID,
          client_secret: DEMO_CLIENT_SECRET,
          redirect_uri: REDIRECT_URI,
        },
        placement,
      );
      expect(answer.status).toBe(200);
      expect(answer.body.access_token).toBe(tokens.access_token);
    },
  );

  test('without rotation the same refresh_token comes back and keeps working', async () => {
    const tokens = await login(simulator);
    const first = await refresh(simulator, tokens.refresh_token);
    const second = await refresh(simulator, tokens.refresh_token);
    expect(first.body.refresh_token).toBe(tokens.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).toBe(tokens.refresh_token);
  });

  test('client credentials are optional, but wrong ones are 401 invalid_client', async () => {
    const tokens = await login(simulator);
    const wrong = await refresh(simulator, tokens.refresh_token, {
      client_id: DEMO_CLIENT_ID,
      client_secret: 'wrong-secret',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');

    const idOnly = await refresh(simulator, tokens.refresh_token, { client_id: DEMO_CLIENT_ID });
    expect(idOnly.status).toBe(401);

    expect((await refresh(simulator, tokens.refresh_token)).status).toBe(200);
  });

  test('a redirect_uri other than the authorization one is invalid_grant', async () => {
    const tokens = await login(simulator);
    const answer = await refresh(simulator, tokens.refresh_token, {
      redirect_uri: 'http://127.0.0.1:1/x',
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_grant');
  });

  test('an unknown refresh_token is invalid_grant; a missing one invalid_request', async () => {
    expect((await refresh(simulator, 'no-such-token')).body.error).toBe('invalid_grant');
    const missing = await postToken(simulator, { grant_type: 'refresh_token' });
    expect(missing.body).toEqual({
      error: 'invalid_request',
      error_description: 'missing parameter refresh_token',
    });
  });

  test('rotation: each refresh returns a new refresh_token and the old one is rejected from then on', async () => {
    simulator.setRotation(true);
    const tokens = await login(simulator);
    const first = await refresh(simulator, tokens.refresh_token);
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).not.toBe(tokens.refresh_token);

    const replay = await refresh(simulator, tokens.refresh_token);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');

    const second = await refresh(simulator, first.body.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);

    simulator.setRotation(false);
    const third = await refresh(simulator, second.body.refresh_token);
    expect(third.body.refresh_token).toBe(second.body.refresh_token);
  });

  test('rotation can be switched on at start', async () => {
    const rotating = await startSimulator({ rotateRefreshTokens: true });
    try {
      const tokens = await login(rotating);
      const answer = await refresh(rotating, tokens.refresh_token);
      expect(answer.body.refresh_token).not.toBe(tokens.refresh_token);
      expect((await refresh(rotating, tokens.refresh_token)).body.error).toBe('invalid_grant');
    } finally {
      await rotating.close();
    }
  });

  test('revokeRefreshTokens(openId) invalidates that player only; revokeRefreshTokens() everyone', async () => {
    const ada = await login(simulator, 'player-ada');
    const bo = await login(simulator, 'player-bo');
    const cy = await login(simulator, 'player-cy');

    simulator.revokeRefreshTokens('player-ada');
    expect((await refresh(simulator, ada.refresh_token)).body.error).toBe('invalid_grant');
    expect((await refresh(simulator, bo.refresh_token)).status).toBe(200);

    simulator.revokeRefreshTokens();
    expect((await refresh(simulator, bo.refresh_token)).body.error).toBe('invalid_grant');
    expect((await refresh(simulator, cy.refresh_token)).body.error).toBe('invalid_grant');
  });

  test('setAccessTokenLifetime changes expires_in and the real expiry of tokens issued from then on', async () => {
    simulator.setAccessTokenLifetime(60);
    const tokens = await login(simulator);
    expect(tokens.expires_in).toBe(60);
    simulator.advanceClock(60);
    expect((await userinfo(simulator, tokens.access_token)).status).toBe(401);

    simulator.setAccessTokenLifetime(120);
    const answer = await refresh(simulator, tokens.refresh_token);
    expect(answer.body.expires_in).toBe(120);
  });

  test('accessTokenLifetimeSeconds and includeUnionId: false shape the response', async () => {
    const custom = await startSimulator({
      accessTokenLifetimeSeconds: 43200,
      includeUnionId: false,
    });
    try {
      const tokens = await login(custom);
      expect(tokens.expires_in).toBe(43200);
      expect(tokens).not.toHaveProperty('unionid');
    } finally {
      await custom.close();
    }
  });
});
