// The simulator's browser side and open API over real HTTP: the lobby page, GET /enter's redirect
// with a code the token endpoint accepts, and GET /userinfo.
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { REDIRECT_URI, exchange, login, refresh, userinfo } from '../helpers/simulator-requests';

let simulator: PlatformSimulator;

beforeEach(async () => {
  simulator = await startSimulator();
});

afterEach(async () => {
  await simulator.close();
});

/** GET without following redirects. */
const get = (url: string): Promise<Response> => fetch(url, { redirect: 'manual' });

describe('lobby', () => {
  test('lists every player with an Enter game button, in a self-contained page', async () => {
    const response = await get(
      `${simulator.url}/?redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await response.text();
    for (const openId of ['player-ada', 'player-bo', 'player-cy']) expect(html).toContain(openId);
    expect(html.match(/<button type="submit">Enter game<\/button>/g)).toHaveLength(3);
    expect(html).toContain(`name="redirect_uri" value="${REDIRECT_URI}"`);
    expect(html).not.toMatch(/<script|<link|src=/);

    // Submitting Bo's form (a GET of its fields to its action) enters the game as Bo.
    const form =
      /<form method="get" action="(\/enter)">((?:(?!<\/form>).)*player-bo(?:(?!<\/form>).)*)<\/form>/.exec(
        html,
      );
    const fields = [...form![2]!.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map(([, n, v]) => [
      n!,
      v!,
    ]);
    const entry = await get(
      `${simulator.url}${form![1]}?${new URLSearchParams(fields).toString()}`,
    );
    expect(entry.status).toBe(302);
    const code = new URL(entry.headers.get('location')!).searchParams.get('code')!;
    expect((await exchange(simulator, code)).body.open_id).toBe('player-bo');
  });

  test('escapes everything it prints', async () => {
    const custom = await startSimulator({
      players: [{ openId: 'p"1', nickname: '<script>alert(1)</script>', scope: ['user_info'] }],
    });
    try {
      const html = await (
        await get(`${custom.url}/?redirect_uri=${encodeURIComponent('http://x/"><b>')}`)
      ).text();
      expect(html).not.toContain('<script>');
      expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
      expect(html).toContain('value="p&#34;1"');
      expect(html).not.toContain('"><b>');
    } finally {
      await custom.close();
    }
  });

  test('without any redirect_uri it says how to give one and disables the buttons', async () => {
    const html = await (await get(`${simulator.url}/`)).text();
    expect(html).toContain('?redirect_uri=');
    expect(html.match(/<button type="submit" disabled>/g)).toHaveLength(3);
  });

  test('Enter game 302s to redirect_uri?code= with a code the token endpoint accepts once', async () => {
    const response = await get(
      simulator.enterUrl({ openId: 'player-bo', redirectUri: REDIRECT_URI }),
    );
    expect(response.status).toBe(302);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    const code = location.searchParams.get('code')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]+$/);

    const answer = await exchange(simulator, code);
    expect(answer.status).toBe(200);
    expect(answer.body.open_id).toBe('player-bo');
    expect((await exchange(simulator, code)).body.error).toBe('invalid_grant');
  });

  test('each entry carries a new code', async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 3; i += 1) {
      const location = (await get(simulator.enterUrl({ redirectUri: REDIRECT_URI }))).headers.get(
        'location',
      )!;
      codes.add(new URL(location).searchParams.get('code')!);
    }
    expect(codes.size).toBe(3);
  });

  test('a redirect_uri with a query keeps it and appends &code=', async () => {
    const target = 'http://127.0.0.1:3000/cb?from=lobby&x=a%20b';
    const location = (await get(simulator.enterUrl({ redirectUri: target }))).headers.get(
      'location',
    )!;
    expect(location).toMatch(
      /^http:\/\/127\.0\.0\.1:3000\/cb\?from=lobby&x=a%20b&code=[A-Za-z0-9_-]+$/,
    );
  });

  test('defaultRedirectUri is used when the lobby URL has none', async () => {
    const custom = await startSimulator({ defaultRedirectUri: REDIRECT_URI });
    try {
      const response = await get(custom.enterUrl({ openId: 'player-cy' }));
      expect(response.status).toBe(302);
      const code = new URL(response.headers.get('location')!).searchParams.get('code')!;
      expect((await exchange(custom, code)).body.open_id).toBe('player-cy');
    } finally {
      await custom.close();
    }
  });

  test.each([
    ['no redirect_uri at all', {}],
    ['a javascript: redirect_uri', { redirectUri: 'javascript:alert(1)' }],
    ['an unknown player', { openId: 'player-nobody', redirectUri: REDIRECT_URI }],
  ])('%s is a 400 page, no redirect', async (_name, options) => {
    const response = await get(simulator.enterUrl(options));
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain('Cannot enter the game');
  });

  test('a redirect_uri the client did not register is refused', async () => {
    const custom = await startSimulator({
      clients: [{ clientId: 'game', clientSecret: 'secret', redirectUris: [REDIRECT_URI] }],
    });
    try {
      expect((await get(custom.enterUrl({ redirectUri: 'http://127.0.0.1:1/evil' }))).status).toBe(
        400,
      );
      // The registered one is the default.
      const location = (await get(custom.enterUrl())).headers.get('location')!;
      expect(location.startsWith(`${REDIRECT_URI}?code=`)).toBe(true);
    } finally {
      await custom.close();
    }
  });
});

describe('GET /userinfo', () => {
  test('answers open_id, unionid and nickname for a Bearer token', async () => {
    const tokens = await login(simulator, 'player-bo');
    const answer = await userinfo(simulator, tokens.access_token);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ open_id: 'player-bo', unionid: 'union-bo', nickname: 'Bo' });
  });

  test('accepts the token in the access_token query parameter', async () => {
    const tokens = await login(simulator);
    const response = await get(
      `${simulator.url}/userinfo?access_token=${String(tokens.access_token)}`,
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as { open_id: string }).open_id).toBe('player-ada');
  });

  test('401 invalid_token with WWW-Authenticate for a missing, unknown or expired token', async () => {
    const missing = await get(`${simulator.url}/userinfo`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    expect(((await missing.json()) as { error: string }).error).toBe('invalid_token');

    const unknown = await userinfo(simulator, 'no-such-token');
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toBe('invalid_token');
    expect(unknown.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const tokens = await login(simulator);
    simulator.advanceClock(7200);
    const expired = await userinfo(simulator, tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.body.error).toBe('invalid_token');
  });

  test('a token sent both ways is 400 invalid_request', async () => {
    const tokens = await login(simulator);
    const response = await fetch(
      `${simulator.url}/userinfo?access_token=${String(tokens.access_token)}`,
      {
        headers: { Authorization: `Bearer ${String(tokens.access_token)}` },
      },
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
  });

  test('a player without the user_info scope gets 403 insufficient_scope', async () => {
    const custom = await startSimulator({
      players: [{ openId: 'quiet', nickname: 'Quiet', scope: ['basic_actions'] }],
    });
    try {
      const tokens = await login(custom);
      expect(tokens.scope).toBe('basic_actions');
      const answer = await userinfo(custom, tokens.access_token);
      expect(answer.status).toBe(403);
      expect(answer.body.error).toBe('insufficient_scope');
    } finally {
      await custom.close();
    }
  });

  test('includeUnionId: false leaves unionid out', async () => {
    const custom = await startSimulator({ includeUnionId: false });
    try {
      const tokens = await login(custom);
      expect((await userinfo(custom, tokens.access_token)).body).toEqual({
        open_id: 'player-ada',
        nickname: 'Ada',
      });
    } finally {
      await custom.close();
    }
  });
});

test('call counts: every /token grant and /userinfo call, until resetCalls()', async () => {
  const tokens = await login(simulator);
  await userinfo(simulator, tokens.access_token);
  await userinfo(simulator, 'no-such-token');
  await refresh(simulator, tokens.refresh_token);
  expect(simulator.calls).toEqual({
    authorization_code: 1,
    refresh_token: 1,
    invalid: 0,
    userinfo: 2,
  });

  const before = simulator.calls;
  simulator.resetCalls();
  expect(before).toEqual({ authorization_code: 0, refresh_token: 0, invalid: 0, userinfo: 0 });
});

test('unknown paths are a JSON 404', async () => {
  const response = await get(`${simulator.url}/nothing-here`);
  expect(response.status).toBe(404);
  expect(await response.json()).toEqual({ error: 'not_found' });
});
