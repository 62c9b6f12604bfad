// The example in a real browser (headless Chromium): lobby, Enter game, the game page, the open API
// button, log out; the page never sees a token or a code. On memory stores and on Redis through
// each REDIS_CLIENT (node-redis, ioredis; sessions on RedisSessionStore). Takes the
// README's screenshots. The example enforces the entry context (PLATFORM_ORIGINS defaults to the
// simulator's origin): the lobby's entry passes, and a login-CSRF attempt from another origin's
// page is refused.
import { QUIET } from '../helpers/test-app';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Browser, Page } from 'playwright-core';
import type { TokenRecord } from 'express-platform-login';
import { readConfig } from '../../example-app/config';
import { startExample, type RunningExample } from '../../example-app/start';
import { expectLureRefused, launchChromium, startLurePage } from '../helpers/browser';
import { storedRecord } from '../helpers/records';

// UPDATE_SCREENSHOTS=1 refreshes docs/example-app.md's pictures; otherwise they go to a scratch folder, so a
// test run leaves the working tree as it was.
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? join(__dirname, '../../docs/screenshots')
    : join(tmpdir(), 'epl-example-screenshots');

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
});

/** The example on `env`, once its stores answer (/healthz). */
async function startReady(env: NodeJS.ProcessEnv): Promise<RunningExample> {
  const example = await startExample(readConfig({ PORT: '0', ...env }), { logger: QUIET });
  const deadline = Date.now() + 10_000;
  while ((await fetch(new URL('/healthz', example.url))).status !== 200) {
    if (Date.now() > deadline) {
      await example.close();
      throw new Error('the example did not become ready in 10 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return example;
}

/** Everything of the page's own state a script on it could read. */
function whatThePageSees(page: Page): Promise<string> {
  return page.evaluate(() =>
    JSON.stringify({
      html: document.documentElement.outerHTML,
      url: location.href,
      cookie: document.cookie,
      local: { ...localStorage },
      session: { ...sessionStorage },
    }),
  );
}

/** Where the example keeps sessions and tokens; the screenshots are taken on the first. */
const SETUPS: [string, NodeJS.ProcessEnv][] = [
  ['memory stores', {}],
  ['Redis through node-redis (REDIS_CLIENT=redis)', { REDIS_CLIENT: 'redis' }],
  ['Redis through ioredis (REDIS_CLIENT=ioredis)', { REDIS_CLIENT: 'ioredis' }],
];

describe.each(SETUPS)('on %s', (setup, env) => {
  let example: RunningExample;
  const screenshot = (page: Page, name: string): Promise<unknown> =>
    setup === SETUPS[0]![0]
      ? page.screenshot({ path: join(SCREENSHOTS, name) })
      : Promise.resolve();

  beforeAll(async () => {
    example = await startReady(
      env.REDIS_CLIENT ? { ...env, REDIS_URL: process.env.REDIS_URL } : env,
    );
  });
  afterAll(async () => {
    await example?.close();
  });

  test('lobby → Enter game → the player → the open API → log out, and the page never sees a token or a code', async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 640 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const codes: string[] = [];
    page.on('request', (request) => {
      const code = new URL(request.url()).searchParams.get('code');
      if (code !== null) codes.push(code);
    });

    try {
      await page.goto(example.url);
      await page.getByText('Enter from the platform').click();
      await page.waitForURL(`${example.simulator!.url}/?**`);
      await page.getByRole('heading', { name: 'Platform lobby' }).waitFor();
      await screenshot(page, 'lobby.png');

      await page
        .locator('li', { hasText: 'player-bo' })
        .getByRole('button', { name: 'Enter game' })
        .click();
      await page.waitForURL(example.url);
      expect(page.url()).toBe(example.url);
      expect(codes).toHaveLength(1); // the platform's redirect carried one code, and it is gone now

      const sessionCookie = (await context.cookies()).find((c) => c.name === 'connect.sid');
      expect(sessionCookie?.httpOnly).toBe(true);
      const sessionId = /^s:(.+)\.[^.]+$/.exec(decodeURIComponent(sessionCookie!.value))![1]!;
      const record = (await storedRecord(example.login.store, sessionId)) as TokenRecord;
      expect(record.openId).toBe('player-bo');

      await expect(page.locator('#open-id').textContent()).resolves.toBe('player-bo');
      await expect(page.locator('#union-id').textContent()).resolves.toBe('union-bo');
      await expect(page.locator('#scope').textContent()).resolves.toBe('user_info, basic_actions');
      // Shown for people ("in 2 h 0 min (at 21:14 UTC)"); the exact instant is in `datetime`.
      await expect(page.locator('#expires').getAttribute('datetime')).resolves.toBe(
        new Date(record.accessExpiresAt).toISOString(),
      );
      await screenshot(page, 'game.png');

      const seen = await whatThePageSees(page);
      expect(JSON.parse(seen)).toMatchObject({ cookie: '', local: {}, session: {} });
      expect(seen).not.toContain('code=');
      for (const secret of [record.accessToken, record.refreshToken, ...codes]) {
        expect(seen).not.toContain(secret);
      }

      await page.getByRole('button', { name: 'Call the open API' }).click();
      const output = page.locator('#output');
      await output.filter({ hasText: 'open_id' }).waitFor();
      const [status, ...body] = (await output.textContent())!.split('\n');
      expect(status).toBe('200');
      expect(JSON.parse(body.join('\n'))).toEqual({
        open_id: 'player-bo',
        unionid: 'union-bo',
        nickname: 'Bo',
      });
      await screenshot(page, 'profile.png');
      const seenAfterCall = await whatThePageSees(page);
      for (const secret of [record.accessToken, record.refreshToken]) {
        expect(seenAfterCall).not.toContain(secret);
      }

      await page.getByRole('button', { name: 'Log out', exact: true }).click();
      await page.locator('#logged-out').waitFor();
      await expect(page.locator('#logged-out').textContent()).resolves.toBe(
        'You are not logged in.',
      );
      expect(page.url()).toBe(example.url);
      expect((await context.cookies()).some((c) => c.name === 'connect.sid')).toBe(false);
      await expect(storedRecord(example.login.store, sessionId)).resolves.toBeUndefined();
      await screenshot(page, 'logged-out.png');
    } finally {
      await context.close();
    }
  });
});

describe('login CSRF', () => {
  let example: RunningExample;
  beforeAll(async () => {
    example = await startReady({});
  });
  afterAll(async () => {
    await example?.close();
  });

  test('login CSRF: an attacker page on another origin navigating to the callback is refused; the victim stays who they were', async () => {
    const sim = example.simulator!;
    // The attacker got a code for their own player and stopped before the platform's redirect.
    const attackerCode = sim.issueCode({ redirectUri: example.redirectUri, openId: 'player-cy' });
    const lure = `${example.redirectUri}?code=${encodeURIComponent(attackerCode)}`;
    const attacker = await startLurePage(lure, '127.0.0.1');
    const attackerUrl = attacker.url;

    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const violations: unknown[] = [];
    const onViolation = (event: unknown): number => violations.push(event);
    example.login.on('entryContextViolation', onViolation);
    try {
      // The victim enters through the lobby as themselves: the lobby's Referer passes enforce.
      await page.goto(example.url);
      await page.getByText('Enter from the platform').click();
      await page.getByRole('heading', { name: 'Platform lobby' }).waitFor();
      await page
        .locator('li', { hasText: 'player-ada' })
        .getByRole('button', { name: 'Enter game' })
        .click();
      await page.waitForURL(example.url);
      await expect(page.locator('#open-id').textContent()).resolves.toBe('player-ada');
      expect(violations).toEqual([]);
      sim.resetCalls();

      // The victim opens the attacker's page, which navigates to the callback with the attacker's code.
      await expectLureRefused(page, attackerUrl, example.redirectUri);
      expect(sim.calls.authorization_code).toBe(0);
      expect(violations).toMatchObject([{ reason: 'foreign-referer', refused: true }]);

      // Still player-ada, and the attacker's code was neither claimed nor sent.
      await page.goto(example.url);
      await expect(page.locator('#open-id').textContent()).resolves.toBe('player-ada');
      const me = await page.evaluate(async () => (await fetch('/api/me')).json());
      expect(me).toMatchObject({ openId: 'player-ada' });
      const stillGood = await fetch(lure, {
        redirect: 'manual',
        headers: {
          Referer: `${sim.url}/`,
          'Sec-Fetch-Dest': 'document',
          'Sec-Fetch-Site': 'cross-site',
        },
      });
      expect(stillGood.status).toBe(303);
    } finally {
      example.login.off('entryContextViolation', onViolation);
      await context.close();
      await attacker.close();
    }
  });
});
