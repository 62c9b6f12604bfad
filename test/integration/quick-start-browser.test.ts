// The README's quick start, copied as is, refuses login CSRF in a real browser (headless Chromium):
// a victim logged in through the platform's lobby opens a page on another site that navigates to
// the callback with the attacker's unused code; the entry is refused and the victim stays who they
// were. Also: the quick start starts quietly (no login-CSRF warning), and the README's curl entry works.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { useSimulator } from '../helpers/bed';
import { expectLureRefused, launchChromium, startLurePage } from '../helpers/browser';
import { freePort } from '../helpers/free-port';
import { startQuickStart, type RunningQuickStart } from '../helpers/quick-start';

let sim: PlatformSimulator;
let browser: Browser;
let quickStart: RunningQuickStart;
let redirectUri: string;
useSimulator((started) => (sim = started));

beforeAll(async () => {
  browser = await launchChromium();
  const port = await freePort();
  redirectUri = `http://localhost:${port}/platform/callback`; // the quick start's default
  quickStart = await startQuickStart({
    NODE_ENV: 'development',
    PORT: String(port),
    PLATFORM_AUTH_URL: sim.url,
    // What the README's table says to set: the simulator's (its lobby's) origin.
    PLATFORM_ORIGINS: new URL(sim.url).origin,
    PLATFORM_CLIENT_ID: 'demo-game',
    PLATFORM_CLIENT_SECRET: 'demo-secret',
    REDIS_URL: process.env.REDIS_URL!,
    SESSION_SECRET: randomBytes(32).toString('base64'),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  });
}, 60_000);

afterAll(async () => {
  await quickStart?.close();
  await browser?.close();
});

test('the quick start starts without the login-CSRF warning (it names the platform origins)', () => {
  expect(quickStart.output()).not.toMatch(/login CSRF/);
});

test('login CSRF in Chromium: a page on another site navigating the victim to the callback is refused; the victim stays logged in as themselves', async () => {
  const attackerCode = sim.issueCode({ redirectUri, openId: 'player-cy' });
  const lure = `${redirectUri}?code=${encodeURIComponent(attackerCode)}`;
  // Another site than the game (localhost) and the platform (127.0.0.1).
  const attacker = await startLurePage(lure, '127.0.0.2');
  const attackerUrl = attacker.url;

  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  try {
    // The victim enters from the platform's lobby as themselves.
    await page.goto(`${sim.url}/?redirect_uri=${encodeURIComponent(redirectUri)}`);
    await page
      .locator('li', { hasText: 'player-ada' })
      .getByRole('button', { name: 'Enter game' })
      .click();
    await page.waitForURL(`${quickStart.url}/`);
    const me = async () => page.evaluate(async () => (await fetch('/api/me')).json());
    await expect(me()).resolves.toMatchObject({ openId: 'player-ada' });
    sim.resetCalls();

    // The victim opens the attacker's page, which sends them to the callback with the attacker's code.
    await expectLureRefused(page, attackerUrl, redirectUri);
    expect(sim.calls.authorization_code).toBe(0);

    // Still player-ada; the attacker's code was neither claimed nor sent.
    await page.goto(`${quickStart.url}/`);
    await expect(me()).resolves.toMatchObject({ openId: 'player-ada' });
    expect(sim.calls.authorization_code).toBe(0);
  } finally {
    await context.close();
    await attacker.close();
  }
});

test("the README's curl entry (-e ';auto': the lobby as Referer) is served; without it, refused", async () => {
  const enter = `${sim.url}/enter?open_id=player-bo&redirect_uri=${encodeURIComponent(redirectUri)}`;
  // Asynchronously: the simulator answering curl runs in this very process.
  const status = async (args: string[]): Promise<string> =>
    (
      await promisify(execFile)(
        'curl',
        ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '10', ...args, enter],
        { encoding: 'utf8' },
      )
    ).stdout;
  // Followed through the callback: served, it lands on the game's `/` (200); refused, it stays 403.
  expect(await status(['-L', '-e', ';auto'])).toBe('200');
  expect(await status(['-L'])).toBe('403');
});
