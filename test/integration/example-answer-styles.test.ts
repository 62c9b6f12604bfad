// The example with PLATFORM_ANSWER_STYLE=errcode and =envelope (docs/answer-styles.md): its embedded
// simulator answers in that style and the package reads it. A player enters through the lobby as a
// browser does; a code the platform already used is the entry's 400 page and counts against the
// address; a dead refresh token is one 401 reauth_required and its socket closed with 4401; a busy platform serves the usable
// token, then 503 with Retry-After, and the player is back once it is; a rate limit holds entries
// with the platform's wait.
import { randomBytes } from 'node:crypto';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { readConfig } from '../../example-app/config';
import { startExample, type RunningExample } from '../../example-app/start';
import { QUIET } from '../helpers/test-app';
import { Browser, fromLobby } from '../helpers/cookie-browser';
import { expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { valueOnce } from '../helpers/wait-until';
import { openSocket } from '../helpers/spawn-socket-backends';
import { exchangeParams, postTokenForm } from '../helpers/simulator-requests';

const JSON_ACCEPT = { Accept: 'application/json' };
const STYLES = ['errcode', 'envelope'] as const;
type Style = (typeof STYLES)[number];

/** The example in each style, started once for the file. */
const examples = new Map<Style, RunningExample>();
beforeAll(async () => {
  await Promise.all(
    STYLES.map(async (style) => {
      const config = readConfig({
        PORT: '0',
        PLATFORM_ANSWER_STYLE: style,
        ENTRY_FAILURE_LIMIT: '1',
      });
      examples.set(style, await startExample(config, { logger: QUIET }));
    }),
  );
});
afterAll(() => Promise.all([...examples.values()].map((example) => example.close())));

/** The example in `style`, its simulator, and how a browser enters it from the platform. */
function on(style: Style) {
  const example = examples.get(style)!;
  const sim = example.simulator!;
  const url = (path: string): string => new URL(path, example.url).href;

  /** The platform's /enter for the first player: the callback URL it sends the browser to. */
  async function platformEntry(browser: Browser): Promise<string> {
    const entry = await browser.fetch(sim.enterUrl({ redirectUri: example.redirectUri }));
    expect(entry.status).toBe(302);
    const callback = new URL(entry.headers.get('location')!);
    return url(callback.pathname + callback.search);
  }

  async function enter(): Promise<Browser> {
    const browser = new Browser();
    const landing = await browser.fetch(await platformEntry(browser), { headers: fromLobby(sim) });
    expect([landing.status, landing.headers.get('location')]).toEqual([303, '/']);
    return browser;
  }
  return { example, sim, url, platformEntry, enter };
}

// The refresh hold after the outage lasts 5 s on either example: the two wait it out side by side.
// First, before either style spends its one allowed failed entry.
test.concurrent.each(STYLES)(
  'PLATFORM_ANSWER_STYLE=%s busy: the usable token is served, an expired one 503 with Retry-After, back with the platform',
  async (style) => {
    const { example, sim, url, enter } = on(style);
    const browser = await enter();
    sim.injectFault({ kind: 'busy' }, { grant: 'refresh_token' });
    await rewriteRecord(example.login.store, browser.sessionId(), expiringIn(30_000));
    expect((await browser.fetch(url('/api/me'), { headers: JSON_ACCEPT })).status).toBe(200);
    await rewriteRecord(example.login.store, browser.sessionId(), expiringIn(-1000));
    const down = await browser.fetch(url('/api/me'), { headers: JSON_ACCEPT });
    expect([down.status, await down.json()]).toEqual([503, { error: 'platform_unavailable' }]);
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    sim.clearFaults();
    // Back once the platform is: after the refresh hold (refresh.failureCooldownSeconds, 5 s).
    expect(
      await valueOnce(
        async () => (await browser.fetch(url('/api/me'), { headers: JSON_ACCEPT })).status,
        (status) => status !== 503,
      ),
    ).toBe(200);
  },
);

describe.each(STYLES)('PLATFORM_ANSWER_STYLE=%s', (style) => {
  let example: RunningExample;
  let sim: PlatformSimulator;
  let url: (path: string) => string;
  let platformEntry: (browser: Browser) => Promise<string>;
  let enter: () => Promise<Browser>;

  beforeAll(() => ({ example, sim, url, platformEntry, enter } = on(style)));
  beforeEach(() => {
    sim.clearFaults();
    sim.resetCalls();
  });

  test("the simulator answers in the style: its token answer is the style's own", async () => {
    const code = sim.issueCode({ redirectUri: example.redirectUri });
    const answer = await postTokenForm(
      sim,
      exchangeParams(code, { redirect_uri: example.redirectUri }),
    );
    const body = (await answer.json()) as Record<string, unknown>;
    if (style === 'envelope') expect(body).toHaveProperty('data.expires_in', '7200');
    else expect(body).toHaveProperty('expires_in', 7200);
    const again = await postTokenForm(
      sim,
      exchangeParams(code, { redirect_uri: example.redirectUri }),
    );
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject(
      style === 'envelope' ? { data: { error_code: 10007 } } : { errcode: 40029 },
    );
  });

  test('enter through the lobby; /api/me; a dead refresh token is one 401 reauth_required, sockets 4401', async () => {
    const browser = await enter();
    const cookie = `connect.sid=${browser.cookies.get('connect.sid')}`;
    const socket = await openSocket(example.url.replace(/\/$/, ''), cookie);
    const me = await browser.fetch(url('/api/me'), { headers: JSON_ACCEPT });
    expect([me.status, ((await me.json()) as { openId: string }).openId]).toEqual([
      200,
      'player-ada',
    ]);
    await rewriteRecord(example.login.store, browser.sessionId(), expiringIn(-1000));
    const sessionId = browser.sessionId();
    sim.revokeRefreshTokens();
    const ended = await browser.fetch(url('/api/me'), { headers: JSON_ACCEPT });
    expect([ended.status, await ended.json()]).toEqual([401, { error: 'reauth_required' }]);
    expect(sim.calls.refresh_token).toBe(1);
    expect(await storedRecord(example.login.store, sessionId)).toBeUndefined();
    expect((await socket.closed).code).toBe(4401);
    const after = await browser.fetch(url('/api/me'), { headers: JSON_ACCEPT });
    expect(after.status).toBe(401);
  });

  test("a rate limit holds the entry with the platform's wait, counted against nobody", async () => {
    sim.injectFault({ kind: 'throttle', retryAfterSeconds: 20 }, { grant: 'authorization_code' });
    const browser = new Browser();
    const held = await browser.fetch(await platformEntry(browser), {
      headers: { ...fromLobby(sim), ...JSON_ACCEPT },
    });
    expect([held.status, await held.json()]).toEqual([503, { error: 'platform_busy' }]);
    expect(Number(held.headers.get('retry-after'))).toBe(20);
  });

  // Last: it spends the address's one allowed failure (ENTRY_FAILURE_LIMIT=1).
  test("a code the platform already used: the entry's 400 page, counted as a failed entry", async () => {
    const browser = new Browser();
    const callback = await platformEntry(browser);
    const code = new URL(callback).searchParams.get('code')!;
    await postTokenForm(sim, exchangeParams(code, { redirect_uri: example.redirectUri }));
    const page = await browser.fetch(callback, {
      headers: { ...fromLobby(sim), Accept: 'text/html' },
    });
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    // Counted: the address's next entry is over ENTRY_FAILURE_LIMIT=1, refused before the platform.
    sim.resetCalls();
    const next = await browser.fetch(
      url(`/platform/callback?code=made-up-${randomBytes(6).toString('hex')}`),
      {
        headers: { ...fromLobby(sim), ...JSON_ACCEPT },
      },
    );
    expect([next.status, await next.json()]).toEqual([429, { error: 'too_many_entries' }]);
    expect(sim.calls.authorization_code).toBe(0);
  });
});
