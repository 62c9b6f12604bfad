// The example with two registrations (`web` and `mini`), two processes on one redis-server — one on
// node-redis in this process, one on ioredis spawned from server.ts — and the simulator over HTTP:
// one POST /api/logout-everywhere ends a player's logins through `web` in two browsers and through
// `mini` in a third (401 on both processes, sockets closed with 4401 within a second), another
// player untouched; the same when the unionid comes late (with a refresh); and no refresh is ever
// sent with another registration's client_id.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import {
  DEMO_CLIENT_ID,
  startSimulator,
  type PlatformSimulator,
} from 'express-platform-login/simulator';
import { readConfig } from '../../example-app/config';
import { startExample, type RunningExample } from '../../example-app/start';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { openSocket, type TestSocket } from '../helpers/spawn-socket-backends';
import { sessionCookieFrom } from '../helpers/session-cookie';
import { CLOSE_WITHIN_MS } from '../helpers/socket-bed';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';
import { BOTH_CLIENTS, entryCode, MINI, MINI_URI, WEB_URI } from '../helpers/two-registrations';
import { spawnExample, stopExample, type SpawnedExample } from '../helpers/spawn-example';
import { QUIET } from '../helpers/test-app';
import { exampleFlow } from '../helpers/example-flow';

let redis: TestRedisServer;
let sim: PlatformSimulator;
let a: RunningExample;
let b: SpawnedExample;
let urls: [string, string];
const sockets: TestSocket[] = [];

beforeAll(async () => {
  [redis, sim] = await Promise.all([
    startRedisServer(),
    // 30 s tokens under a 60 s skew: every request refreshes, so every login's refreshes are seen.
    startSimulator({
      clients: BOTH_CLIENTS,
      accessTokenLifetimeSeconds: 30,
    }),
  ]);
  const env = {
    PORT: '0',
    PLATFORM_AUTH_URL: sim.url,
    PLATFORM_REDIRECT_URI: WEB_URI,
    PLATFORM_REGISTRATIONS: JSON.stringify([{ name: 'mini', ...MINI, redirectUri: MINI_URI }]),
    PLATFORM_ORIGINS: new URL(sim.url).origin,
    REDIS_URL: redis.url,
    SESSION_SECRET: randomBytes(24).toString('base64url'),
  };
  [a, b] = await Promise.all([
    startExample(readConfig({ ...env, REDIS_CLIENT: 'redis' }), { logger: QUIET }),
    spawnExample({ ...env, REDIS_CLIENT: 'ioredis' }),
  ]);
  urls = [a.url.replace(/\/$/, ''), b.url];
}, 60_000);
afterAll(async () => {
  for (const socket of sockets) socket.ws.terminate();
  await stopExample(b);
  await a?.close();
  await Promise.all([sim?.close(), redis?.stop()]);
});

/** Enters `openId` through a registration on the process at `url`; resolves the session cookie. */
async function enter(url: string, openId: string, via: 'web' | 'mini'): Promise<string> {
  const { code, path } = entryCode(sim, openId, via);
  const res = await request(url)
    .get(`${path}?code=${encodeURIComponent(code)}`)
    // A platform webview: no Fetch Metadata, the platform's page as the referrer.
    .set('Referer', `${sim.url}/`);
  expect(res.status).toBe(303);
  return sessionCookieFrom(res);
}

const me = (url: string, cookie: string) =>
  request(url).get('/api/me').set('Cookie', cookie).set('Accept', 'application/json');

const open = async (url: string, cookie: string): Promise<TestSocket> => {
  const socket = await openSocket(url, cookie);
  sockets.push(socket);
  return socket;
};

/** A player in `web` on both processes and in `mini`, each with a socket on the other process. */
async function playerEverywhere(openId: string) {
  const [onA, onB] = urls;
  const browsers = [
    { cookie: await enter(onA, openId, 'web'), url: onA },
    { cookie: await enter(onB, openId, 'web'), url: onB },
    { cookie: await enter(onA, openId, 'mini'), url: onA },
  ];
  const live = await Promise.all(
    browsers.map((browser) => open(browser.url === onA ? onB : onA, browser.cookie)),
  );
  return { browsers, live };
}

/**
 * POSTs /api/logout-everywhere to `url` as `cookie`: answered 204, every socket of `live` closed
 * with 4401 within a second, every login of `browsers` answered 401 on both processes.
 */
async function logOutEverywhere(
  url: string,
  cookie: string,
  browsers: { cookie: string }[],
  live: TestSocket[],
): Promise<void> {
  const since = Date.now();
  const out = await request(url).post('/api/logout-everywhere').set('Cookie', cookie);
  expect(out.status).toBe(204);
  for (const socket of live) {
    const closed = await socket.closed;
    expect(closed.code).toBe(4401);
    expect(closed.at - since).toBeLessThanOrEqual(CLOSE_WITHIN_MS + LOAD_ALLOWANCE_MS);
  }
  for (const { cookie } of browsers)
    for (const url of urls) expect((await me(url, cookie)).status).toBe(401);
}

test('one POST /api/logout-everywhere ends web in two browsers and mini in a third; another player untouched', async () => {
  const { browsers, live } = await playerEverywhere('player-ada');
  expect((await me(urls[1], browsers[0]!.cookie)).body).toMatchObject({
    openId: 'player-ada',
    unionId: 'union-ada',
    registration: 'web',
  });
  expect((await me(urls[0], browsers[2]!.cookie)).body).toMatchObject({
    openId: 'mini-game.player-ada',
    unionId: 'union-ada',
    registration: 'mini',
  });
  const bo = await enter(urls[1], 'player-bo', 'mini');
  const boSocket = await open(urls[0], bo);

  await logOutEverywhere(urls[1], browsers[2]!.cookie, browsers, live);
  expect((await me(urls[0], bo)).body).toMatchObject({ openId: 'mini-game.player-bo' });
  expect(boSocket.ws.readyState).toBe(boSocket.ws.OPEN);
});

test('the same when the unionid comes late, with a refresh', async () => {
  sim.setUnionIdOnRefreshOnly(true);
  try {
    const { browsers, live } = await playerEverywhere('player-cy');
    // Each login's first request refreshes; the refresh answer brings the unionid: they join.
    for (const [index, { cookie }] of browsers.entries())
      expect((await me(urls[index % 2]!, cookie)).body).toMatchObject({ unionId: 'union-cy' });
    await logOutEverywhere(urls[0], browsers[0]!.cookie, browsers, live);
  } finally {
    sim.setUnionIdOnRefreshOnly(false);
  }
});

test("no refresh was ever sent with another registration's client_id", () => {
  expect(sim.callsOfClient(DEMO_CLIENT_ID).refresh_token).toBeGreaterThan(0);
  expect(sim.callsOfClient(MINI.clientId).refresh_token).toBeGreaterThan(0);
  expect(sim.foreignClientRefreshes).toBe(0);
});

test('with no environment the example has web and mini: the lobby link of each enters through it', async () => {
  const embedded = await startExample(readConfig({ PORT: '0' }), { logger: QUIET });
  try {
    const [web, mini] = [
      await exampleFlow(embedded.url),
      await exampleFlow(embedded.url, 'enter-mini'),
    ];
    expect(web.me).toEqual({ status: 200, openId: 'player-ada' });
    expect(mini).toMatchObject({ entry: 303, me: { status: 200, openId: 'mini-game.player-ada' } });
    expect(mini.afterLogout).toBe(401);
  } finally {
    await embedded.close();
  }
});
