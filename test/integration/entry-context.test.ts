// Entry context on the real callback against the simulator: off, report and enforce, with the
// headers browsers send; a refused entry neither claims nor sends its code.
import request from 'supertest';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { platformLogin, SetupError, type PlatformLoginEvents } from 'express-platform-login';
import {
  createTestApp,
  loginOptions,
  TEST_REDIRECT_URI,
  warningsLogger,
} from '../helpers/test-app';
import { useSimulator } from '../helpers/bed';

const PLATFORM = 'https://platform.example';
const FROM_PLATFORM = {
  'Sec-Fetch-Site': 'cross-site',
  'Sec-Fetch-Mode': 'navigate',
  'Sec-Fetch-Dest': 'document',
  Referer: `${PLATFORM}/`,
};
const FROM_ATTACKER = { ...FROM_PLATFORM, Referer: 'https://attacker.example/lure?x=1' };
const AS_IMAGE = { ...FROM_ATTACKER, 'Sec-Fetch-Dest': 'image', 'Sec-Fetch-Mode': 'no-cors' };

type Violation = PlatformLoginEvents['entryContextViolation'][0];

let sim: PlatformSimulator;
useSimulator((started) => (sim = started));

const code = (): string => sim.issueCode({ redirectUri: TEST_REDIRECT_URI });

function appWith(mode: 'off' | 'report' | 'enforce', extra: Record<string, boolean> = {}) {
  const { app, login } = createTestApp({
    sim,
    login: { platformOrigins: [PLATFORM], entry: { context: { mode, ...extra } } },
  });
  const violations: Violation[] = [];
  login.on('entryContextViolation', (event) => violations.push(event));
  return { app, violations };
}

describe("mode 'enforce'", () => {
  test('an entry from the platform page is served', async () => {
    const { app, violations } = appWith('enforce');
    const res = await request(app).get(`/platform/callback?code=${code()}`).set(FROM_PLATFORM);
    expect(res.status).toBe(303);
    expect(sim.calls.authorization_code).toBe(1);
    expect(violations).toEqual([]);
  });

  test("a refused entry's log line names the origin it came from and platformOrigins", async () => {
    const lines: string[] = [];
    const record = (_fields: unknown, message: string) => void lines.push(message);
    const logger = { debug: record, info: record, warn: record, error: record };
    const { app } = createTestApp({
      sim,
      login: { platformOrigins: [PLATFORM], logger, entry: { context: { mode: 'enforce' } } },
    });
    const entry = code();
    await request(app).get(`/platform/callback?code=${entry}`).set(FROM_ATTACKER).expect(403);
    const refused = lines.filter((line) => line.includes('refused before its code was claimed'));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toContain(
      `it came from https://attacker.example, platformOrigins is ${PLATFORM}`,
    );
    expect(refused[0]).not.toContain(entry);
    expect(sim.calls.authorization_code).toBe(0);
  });

  test.each([
    ['from an attacker page', FROM_ATTACKER, 'foreign-referer'],
    ['as an image on an attacker page', AS_IMAGE, 'unexpected-destination'],
    ['with the referrer hidden', { ...FROM_PLATFORM, Referer: '' }, 'referer-missing'],
    [
      'typed or opened from another app',
      { 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Dest': 'document' },
      'direct-navigation',
    ],
    ['with no context headers at all', {}, 'headers-missing'],
  ])(
    'an entry %s is 403 entry_context_refused; its code is neither claimed nor sent',
    async (_name, headers, reason) => {
      const { app, violations } = appWith('enforce');
      const entry = code();
      const res = await request(app)
        .get(`/platform/callback?code=${entry}`)
        .set(headers as Record<string, string>)
        .set('Accept', 'application/json');
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'entry_context_refused' });
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(sim.calls.authorization_code).toBe(0);
      expect(violations).toHaveLength(1);
      expect(violations[0]).toMatchObject({ reason, refused: true });
      // The code was not burnt: the player's real entry from the platform still works.
      await request(app).get(`/platform/callback?code=${entry}`).set(FROM_PLATFORM).expect(303);
      expect(sim.calls.authorization_code).toBe(1);
    },
  );

  test('browsers get the HTML page', async () => {
    const { app } = appWith('enforce');
    const res = await request(app)
      .get(`/platform/callback?code=${code()}`)
      .set(FROM_ATTACKER)
      .set('Accept', 'text/html');
    expect(res.status).toBe(403);
    expect(res.text).toContain('did not come from the platform');
  });

  test('allowMissingHeaders lets webviews in, and only them', async () => {
    const { app, violations } = appWith('enforce', { allowMissingHeaders: true });
    await request(app).get(`/platform/callback?code=${code()}`).expect(303);
    await request(app).get(`/platform/callback?code=${code()}`).set(FROM_ATTACKER).expect(403);
    expect(sim.calls.authorization_code).toBe(1);
    expect(violations.map((v) => v.reason)).toEqual(['foreign-referer']);
  });

  test('allowDirectNavigation lets a native app open the entry in a browser', async () => {
    const { app } = appWith('enforce', { allowDirectNavigation: true });
    await request(app)
      .get(`/platform/callback?code=${code()}`)
      .set({ 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Dest': 'document' })
      .expect(303);
    expect(sim.calls.authorization_code).toBe(1);
  });
});

describe("mode 'report'", () => {
  test('a foreign entry is served and reported, without the code or the full Referer', async () => {
    const { app, violations } = appWith('report');
    const entry = code();
    const res = await request(app).get(`/platform/callback?code=${entry}`).set(FROM_ATTACKER);
    expect(res.status).toBe(303);
    expect(sim.calls.authorization_code).toBe(1);
    expect(violations).toEqual([
      {
        reason: 'foreign-referer',
        refused: false,
        secFetchSite: 'cross-site',
        secFetchDest: 'document',
        refererOrigin: 'https://attacker.example',
      },
    ]);
    expect(JSON.stringify(violations)).not.toContain(entry);
    expect(JSON.stringify(violations)).not.toContain('lure');
  });

  test('an entry from the platform raises no event', async () => {
    const { app, violations } = appWith('report');
    await request(app).get(`/platform/callback?code=${code()}`).set(FROM_PLATFORM).expect(303);
    expect(violations).toEqual([]);
  });

  test('header values are bounded in the event', async () => {
    const { app, violations } = appWith('report');
    await request(app)
      .get(`/platform/callback?code=${code()}`)
      .set({ 'Sec-Fetch-Site': 'cross-site<script>', 'Sec-Fetch-Dest': 'x'.repeat(100) })
      .expect(403);
    expect(violations).toEqual([
      {
        reason: 'unexpected-destination',
        refused: true,
        secFetchSite: undefined,
        secFetchDest: undefined,
        refererOrigin: undefined,
      },
    ]);
  });
});

describe("mode 'off'", () => {
  test('no check and no event for navigations, whatever their origin', async () => {
    const { app, violations } = appWith('off');
    await request(app).get(`/platform/callback?code=${code()}`).set(FROM_ATTACKER).expect(303);
    await request(app).get(`/platform/callback?code=${code()}`).expect(303);
    expect(violations).toEqual([]);
  });

  test.each([
    ['image', AS_IMAGE],
    ['script', { ...AS_IMAGE, 'Sec-Fetch-Dest': 'script' }],
    ['fetch()', { ...AS_IMAGE, 'Sec-Fetch-Dest': 'empty', 'Sec-Fetch-Mode': 'cors' }],
  ])('a sub-resource load (%s) never redeems a code, even here', async (_name, headers) => {
    const { app, violations } = appWith('off');
    const entry = code();
    await request(app).get(`/platform/callback?code=${entry}`).set(headers).expect(403);
    expect(sim.calls.authorization_code).toBe(0);
    expect(violations).toMatchObject([{ reason: 'unexpected-destination', refused: true }]);
    await request(app).get(`/platform/callback?code=${entry}`).set(FROM_PLATFORM).expect(303);
  });
});

describe('the default mode', () => {
  test("with platformOrigins: 'enforce', a foreign entry refused without any entry.context option", async () => {
    const { app } = createTestApp({ sim, login: { platformOrigins: [PLATFORM] } });
    await request(app).get(`/platform/callback?code=${code()}`).set(FROM_ATTACKER).expect(403);
    await request(app).get(`/platform/callback?code=${code()}`).set(FROM_PLATFORM).expect(303);
    expect(sim.calls.authorization_code).toBe(1);
  });

  test("without platformOrigins: 'report', with one start-up warning through the logger saying what to set", async () => {
    const { logger, warnings } = warningsLogger();
    // Origins left out on purpose (the test helpers name the simulator's).
    const { app, login } = createTestApp({ sim, login: { logger, platformOrigins: undefined } });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/login CSRF.*set `platformOrigins`/);
    const violations: Violation[] = [];
    login.on('entryContextViolation', (event) => violations.push(event));
    await request(app).get(`/platform/callback?code=${code()}`).set(FROM_ATTACKER).expect(303);
    await request(app).get(`/platform/callback?code=${code()}`).set(FROM_ATTACKER).expect(303);
    expect(violations).toMatchObject([
      { reason: 'foreign-referer', refused: false, refererOrigin: 'https://attacker.example' },
      { reason: 'foreign-referer', refused: false },
    ]);
    expect(warnings).toHaveLength(1);
    // Chosen explicitly, no warning.
    createTestApp({ sim, login: { logger, entry: { context: { mode: 'off' } } } });
    expect(warnings).toHaveLength(1);
  });
});

test("the test helpers name the simulator's origins: their apps start without the login-CSRF warning and enforce", async () => {
  const { logger, warnings } = warningsLogger();
  const { app } = createTestApp({ sim, login: { logger } });
  expect(warnings).toEqual([]);
  await request(app).get(`/platform/callback?code=${code()}`).set(FROM_ATTACKER).expect(403);
  const fromLobby = { ...FROM_PLATFORM, Referer: `${sim.url}/` };
  await request(app).get(`/platform/callback?code=${code()}`).set(fromLobby).expect(303);
});

describe('NODE_ENV=production', () => {
  const nodeEnv = process.env.NODE_ENV;
  beforeEach(() => (process.env.NODE_ENV = 'production'));
  afterEach(() => (process.env.NODE_ENV = nodeEnv));
  const production = (extra: Parameters<typeof loginOptions>[1]) =>
    platformLogin({ ...loginOptions(sim, extra), authUrl: 'https://auth.platform.example' });

  test('without platformOrigins the start is refused, naming the option and the opt-out', () => {
    let refusal: unknown;
    try {
      production({ platformOrigins: undefined });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(SetupError);
    expect(refusal).toMatchObject({
      code: 'ERR_PLATFORM_INVALID_OPTION',
      option: 'platformOrigins',
    });
    expect(String((refusal as Error).message)).toMatch(
      /`platformOrigins` is required under NODE_ENV=production.*login CSRF.*entry: \{ context: \{ mode: 'report' \} \}/,
    );
  });

  test("starts with platformOrigins, or with the explicit opt-out entry: { context: { mode: 'report' } }", () => {
    expect(() => production({ platformOrigins: [PLATFORM] })).not.toThrow();
    expect(() => production({ entry: { context: { mode: 'report' } } })).not.toThrow();
    expect(() => production({ entry: { context: { mode: 'off' } } })).not.toThrow();
  });
});

describe('options', () => {
  test("'enforce' without platformOrigins is a SetupError naming it", () => {
    const create = () =>
      platformLogin(loginOptions(sim, { entry: { context: { mode: 'enforce' } } }));
    expect(create).toThrow(/`platformOrigins` is required when `entry.context.mode` is 'enforce'/);
    expect(create).toThrow(
      expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: 'platformOrigins' }),
    );
  });

  test('platformOrigins must be origins', () => {
    for (const bad of [
      ['https://platform.example/lobby'],
      ['platform.example'],
      [],
      ['*.x.example'],
    ]) {
      expect(() => platformLogin(loginOptions(sim, { platformOrigins: bad }))).toThrow(
        /`platformOrigins/,
      );
    }
    expect(() =>
      platformLogin(loginOptions(sim, { platformOrigins: ['https://Platform.Example:443/'] })),
    ).not.toThrow();
  });
});
