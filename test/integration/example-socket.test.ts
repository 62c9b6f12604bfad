// The example's `GET /ws` and its live panel, on two example processes sharing a real redis-server
// (one in this process, one spawned from `example-app/server.ts`): the contract of
// docs/example-app.md (401 without a login, hello within 3 s, `profile`, 4401 within 1 s of a logout on the
// other process; a burst of `profile` messages shares one call to the platform), and in headless
// Chromium the page's live panel reacting to that logout, the nickname, a readable expiry, the
// favicon, the 401 page's way back, and a logout that did not go through said as such.
import { QUIET } from '../helpers/test-app';
import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { readConfig } from '../../example-app/config';
import { startExample, type RunningExample } from '../../example-app/start';
import { launchChromium } from '../helpers/browser';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { openSocket, type TestSocket } from '../helpers/spawn-socket-backends';
import { sessionCookieFrom } from '../helpers/session-cookie';
import { CLOSE_WITHIN_MS } from '../helpers/socket-bed';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';
import { spawnExample, stopExample, type SpawnedExample } from '../helpers/spawn-example';
import { waitUntil } from '../helpers/wait-until';

let redis: TestRedisServer;
let sim: PlatformSimulator;
let a: RunningExample;
let b: SpawnedExample;
let browser: Browser;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  [redis, sim, browser] = await Promise.all([
    startRedisServer(),
    startSimulator(),
    launchChromium(),
  ]);
  const env = {
    PORT: '0',
    PLATFORM_AUTH_URL: sim.url,
    REDIS_URL: redis.url,
    SESSION_SECRET: randomBytes(24).toString('base64url'),
  };
  [a, b] = await Promise.all([startExample(readConfig(env), { logger: QUIET }), spawnExample(env)]);
  await waitUntil(async () => (await fetch(`${a.url}healthz`)).ok, 'the example to be ready');
}, 60_000);
afterAll(async () => {
  for (const socket of sockets) socket.ws.terminate();
  await browser?.close();
  await stopExample(b);
  await a?.close();
  await Promise.all([sim?.close(), redis?.stop()]);
});

/** Enters as `openId` through example A; resolves the session cookie. */
async function enter(openId: string): Promise<string> {
  const code = sim.issueCode({ redirectUri: a.redirectUri, openId });
  const res = await request(a.url.replace(/\/$/, '')).get(
    `/platform/callback?code=${encodeURIComponent(code)}`,
  );
  expect(res.status).toBe(303);
  return sessionCookieFrom(res);
}

const open = async (url: string, cookie?: string): Promise<TestSocket> => {
  const socket = await openSocket(url.replace(/\/$/, ''), cookie);
  sockets.push(socket);
  return socket;
};

describe('GET /ws, as docs/example-app.md says', () => {
  test('without a login: 401 and no upgrade', async () => {
    await expect(openSocket(a.url.replace(/\/$/, ''))).rejects.toMatchObject({ status: 401 });
  });

  test('a burst of profile messages on one socket: each answered, the platform asked far fewer times', async () => {
    const socket = await open(a.url, await enter('player-ada'));
    const before = sim.calls.userinfo;
    const frames = await Promise.all(Array.from({ length: 50 }, () => socket.profile()));
    expect(frames.map((frame) => frame.status)).toEqual(Array(50).fill(200));
    expect(sim.calls.userinfo - before).toBeLessThanOrEqual(5);
  });

  test('hello within 3 s and the profile on both processes; 4401 within 1 s of a logout on the other', async () => {
    const cookie = await enter('player-ada');
    const onA = await open(a.url, cookie);
    const onB = await open(b.url, cookie);
    for (const socket of [onA, onB]) {
      expect(socket.frames[0]).toEqual({ type: 'hello', openId: 'player-ada' });
      expect(await socket.profile()).toEqual({
        type: 'profile',
        status: 200,
        body: { open_id: 'player-ada', unionid: 'union-ada', nickname: 'Ada' },
      });
    }
    const since = Date.now();
    const logout = await request(b.url).post('/logout').set('Cookie', cookie);
    expect(logout.status).toBe(204);
    for (const socket of [onA, onB]) {
      const closed = await socket.closed;
      expect(closed.code).toBe(4401);
      expect(closed.at - since).toBeLessThanOrEqual(CLOSE_WITHIN_MS + LOAD_ALLOWANCE_MS);
    }
  });
});

test('the page in Chromium: nickname, readable expiry, favicon; the live panel reacts to a logout on the other process; the 401 page leads back', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const notFound: string[] = [];
  page.on('response', (res) => {
    if (res.status() === 404) notFound.push(res.url());
  });
  try {
    await page.goto(sim.enterUrl({ openId: 'player-bo', redirectUri: a.redirectUri }));
    await page.waitForURL(a.url);
    await expect(page.locator('#nickname').textContent()).resolves.toBe('Bo');
    await expect(page.locator('#open-id').textContent()).resolves.toBe('player-bo');
    await expect(page.locator('#expires').textContent()).resolves.toMatch(
      /^in (1 h 59|2 h 0) min \(at \d\d:\d\d UTC\)$/,
    );
    await page.locator('#live[data-state="open"]').waitFor();
    // No empty grey box under the buttons before the open API was called.
    expect(await page.locator('#output').isVisible()).toBe(false);
    const icon = await page.request.get(`${a.url}favicon.ico`);
    expect(icon.status()).toBe(200);

    // The player is logged out from the other process (another tab, another device).
    const cookie = (await context.cookies()).find((c) => c.name === 'connect.sid')!;
    const since = Date.now();
    const logout = await request(b.url)
      .post('/logout')
      .set('Cookie', `connect.sid=${cookie.value}`);
    expect(logout.status).toBe(204);
    await page.locator('#live[data-state="ended"]').waitFor();
    expect(Date.now() - since).toBeLessThan(1500 + LOAD_ALLOWANCE_MS);
    await expect(page.locator('#live-text').textContent()).resolves.toContain('Your login ended');

    // The 401 page of an API route opened in the browser now leads back to the game.
    await page.goto(`${a.url}api/me`);
    await expect(page.locator('body').textContent()).resolves.toContain('You are not logged in');
    await page.getByRole('link', { name: 'Back to the game' }).click();
    await page.locator('#logged-out').waitFor();
    await expect(page.locator('#enter').isVisible()).resolves.toBe(true);
    expect(notFound).toEqual([]);
  } finally {
    await context.close();
  }
});

test('the page in Chromium: a logout that did not go through (Redis stalled) says so and the player stays; once Redis answers, Log out works', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  try {
    await page.goto(sim.enterUrl({ openId: 'player-bo', redirectUri: a.redirectUri }));
    await page.waitForURL(a.url);
    await page.locator('#live[data-state="open"]').waitFor();
    redis.pause();
    try {
      await page.locator('#logout').click();
      await page.waitForFunction(() => document.getElementById('output')?.textContent !== '');
      const said = await page.locator('#output').textContent();
      expect(said).toMatch(/^503 store_unavailable\nThe logout did not go through/);
    } finally {
      redis.resume();
    }
    expect(page.url()).toBe(a.url);
    await expect(page.locator('#nickname').textContent()).resolves.toBe('Bo');
    await page.locator('#logout').click();
    await page.locator('#logged-out').waitFor();
  } finally {
    await context.close();
  }
});
