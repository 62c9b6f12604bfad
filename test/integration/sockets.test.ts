// WebSockets on two game backend processes sharing a real redis-server, against the simulator: the
// upgrade is authenticated from the session cookie (401 and no upgrade without a live login), the
// handler gets the player and the open API, and every socket of a session closes with 4401 within
// a second of its login ending — however it ends, on whichever process. Nothing else is touched,
// one refresh serves twenty sockets, and no token shows in a frame or a log line.
import request from 'supertest';
import { Redis } from 'ioredis';
import { io as socketIoClient } from 'socket.io-client';
import WebSocket from 'ws';
import { RedisTokenStore, type TokenRecord } from 'express-platform-login';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { hashSessionId } from '../../lib/core/hash';
import { enterAs, openSocket, type SocketProcess } from '../helpers/spawn-socket-backends';
import { findLeaks } from '../helpers/leak-scan';
import { expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { quietWindow } from '../helpers/command-counts';
import { waitUntil } from '../helpers/wait-until';
import {
  closedWithin,
  CLOSE_WITHIN_MS,
  open,
  opened,
  useSocketBackends,
} from '../helpers/socket-bed';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';

const PREFIX = 'ws:';
let sim: PlatformSimulator;
let raw: Redis;
let store: RedisTokenStore;
let a: SocketProcess;
let b: SocketProcess;
useSocketBackends(PREFIX, (bed) => ({ sim, raw, store, a, b } = bed));
afterEach(() => sim.clearFaults());

/** The `requestFailed` lines `process` wrote after `offset`, once there is one. */
async function reportedSince(process: SocketProcess, offset: number): Promise<string[]> {
  const lines = (): string[] =>
    process
      .output()
      .slice(offset)
      .split('\n')
      .filter((line) => line.includes('"event":"requestFailed"'));
  await waitUntil(() => lines().length > 0, 'a requestFailed line');
  return lines();
}

describe('the upgrade', () => {
  test('without a login: HTTP 401 login_required, and no upgrade', async () => {
    await expect(openSocket(a.url)).rejects.toMatchObject({
      status: 401,
      body: '{"error":"login_required"}',
    });
    // A cookie the server never issued is no better.
    await expect(openSocket(a.url, 'connect.sid=s%3Aforged.sig')).rejects.toMatchObject({
      status: 401,
    });
  });

  test('a session that logged out: HTTP 401 on both processes', async () => {
    const browser = await enterAs(a.url, sim, 'player-ada');
    await request(a.url).post('/logout').set('Cookie', browser.cookie).set('Origin', a.url);
    await expect(openSocket(a.url, browser.cookie)).rejects.toMatchObject({ status: 401 });
    await expect(openSocket(b.url, browser.cookie)).rejects.toMatchObject({ status: 401 });
  });

  test("a page of another site with the player's cookie: HTTP 403 cross_origin_refused, no upgrade", async () => {
    const browser = await enterAs(a.url, sim, 'player-ada');
    // What a browser sends when a page on another site opens the game's socket.
    const foreign: Array<Record<string, string>> = [
      { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' },
      { Origin: 'https://evil.example' },
      { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'same-site' },
    ];
    for (const headers of foreign) {
      await expect(openSocket(a.url, browser.cookie, headers)).rejects.toMatchObject({
        status: 403,
        body: '{"error":"cross_origin_refused"}',
      });
    }
    // The game's own page (same origin) opens it.
    const own = await open(a.url, browser.cookie);
    expect(own.frames[0]).toMatchObject({ type: 'hello', openId: 'player-ada' });
    const sameOrigin = await openSocket(a.url, browser.cookie, {
      Origin: new URL(a.url).origin,
      'Sec-Fetch-Site': 'same-origin',
    });
    opened.push(sameOrigin);
    expect(sameOrigin.frames[0]).toMatchObject({ type: 'hello', openId: 'player-ada' });
  });

  test("a refusal with a 5xx is logged as a request's is: one error line naming the socket part and the code", async () => {
    const browser = await enterAs(a.url, sim, 'player-bo');
    // An expired token, and a platform that answers its refresh 503: the upgrade cannot open.
    await rewriteRecord(store, browser.sessionId, expiringIn(-1000));
    sim.injectFault({ kind: 'status', status: 503 }, { grant: 'refresh_token' });
    const before = a.output().length;
    await expect(openSocket(a.url, browser.cookie)).rejects.toMatchObject({
      status: 503,
      body: '{"error":"platform_unavailable"}',
    });
    // The process's output arrives on a pipe of its own, maybe after the answer.
    const failed = await reportedSince(a, before);
    expect(failed).toEqual([expect.stringMatching(/^error .*"part":"socket"/)]);
    expect(failed[0]).toContain('"code":"ERR_PLATFORM_UNAVAILABLE"');
    expect(failed[0]).toContain('"url":"/ws"');
  });

  test('with a login: hello within 3 s and the profile, on both processes', async () => {
    const browser = await enterAs(a.url, sim, 'player-bo');
    for (const process of [a, b]) {
      const socket = await open(process.url, browser.cookie);
      expect(socket.frames[0]).toMatchObject({ type: 'hello', openId: 'player-bo' });
      const profile = await socket.profile();
      expect(profile).toMatchObject({ type: 'profile', status: 200 });
      expect((profile.body as { open_id: string }).open_id).toBe('player-bo');
    }
  });
});

describe('the login ends: every socket of the session closes with 4401 within a second', () => {
  test('logout on the other process', async () => {
    const browser = await enterAs(a.url, sim, 'player-ada');
    const onA = await open(a.url, browser.cookie);
    const onB = await open(b.url, browser.cookie);
    const since = Date.now();
    const res = await request(b.url).post('/logout').set('Cookie', browser.cookie);
    expect(res.status).toBeLessThan(400);
    for (const socket of [onA, onB]) {
      expect(await closedWithin(socket, since)).toMatchObject({
        code: 4401,
        reason: 'login_required',
      });
    }
  });

  test('logoutPlayer, and the other player is left alone', async () => {
    const ada = await enterAs(a.url, sim, 'player-ada');
    const bo = await enterAs(b.url, sim, 'player-bo');
    const adaSocket = await open(a.url, ada.cookie);
    const boSocket = await open(a.url, bo.cookie);
    const since = Date.now();
    await request(b.url).post('/admin/logout-player?openId=player-ada');
    expect((await closedWithin(adaSocket, since)).code).toBe(4401);
    expect(boSocket.ws.readyState).toBe(boSocket.ws.OPEN);
    expect(await boSocket.profile()).toMatchObject({ type: 'profile', status: 200 });
  });

  test('the record deleted by hand (DEL)', async () => {
    const browser = await enterAs(a.url, sim, 'player-ada');
    const socket = await open(b.url, browser.cookie);
    const since = Date.now();
    expect(await raw.del(`${PREFIX}t:t:${hashSessionId(browser.sessionId)}`)).toBe(1);
    expect((await closedWithin(socket, since)).code).toBe(4401);
  });

  test('the platform refuses the refresh: the asking socket and the one on the other process close', async () => {
    const browser = await enterAs(a.url, sim, 'player-cy');
    const asking = await open(a.url, browser.cookie);
    const other = await open(b.url, browser.cookie);
    // The platform's clock passes the token's expiry (the open API answers 401), and it no longer
    // accepts the refresh token: the socket's forced refresh is refused.
    sim.advanceClock(3 * 3600);
    sim.revokeRefreshTokens('player-cy');
    const since = Date.now();
    asking.ws.send(JSON.stringify({ type: 'profile' }));
    // Its reason: reauth_required when the refusal reached it before the deletion's notice did.
    const closed = await closedWithin(asking, since);
    expect(closed.code).toBe(4401);
    expect(['reauth_required', 'login_required']).toContain(closed.reason);
    expect((await closedWithin(other, since)).code).toBe(4401);
  });

  test("the same player's other session is left alone", async () => {
    const phone = await enterAs(a.url, sim, 'player-bo');
    const laptop = await enterAs(a.url, sim, 'player-bo');
    const phoneSocket = await open(a.url, phone.cookie);
    const laptopSocket = await open(b.url, laptop.cookie);
    const since = Date.now();
    await request(a.url).post('/logout').set('Cookie', phone.cookie);
    expect((await closedWithin(phoneSocket, since)).code).toBe(4401);
    await new Promise((resolve) => setTimeout(resolve, CLOSE_WITHIN_MS));
    expect(laptopSocket.ws.readyState).toBe(laptopSocket.ws.OPEN);
    expect(await laptopSocket.profile()).toMatchObject({ type: 'profile', status: 200 });
  });
});

test('20 sockets on two processes ask for the profile with an expired token: one refresh', async () => {
  const browser = await enterAs(a.url, sim, 'player-ada');
  const sockets = await Promise.all(
    Array.from({ length: 20 }, (_, i) => open(i % 2 === 0 ? a.url : b.url, browser.cookie)),
  );
  await rewriteRecord(store, browser.sessionId, expiringIn(-1000)); // the access token expired
  // Every socket's watch reads the rewritten record (the sockets then hold an expired token).
  await new Promise((resolve) => setTimeout(resolve, CLOSE_WITHIN_MS));
  sim.resetCalls();
  const profiles = await Promise.all(sockets.map((socket) => socket.profile()));
  expect(profiles.map((profile) => profile.status)).toEqual(Array(20).fill(200));
  expect(sim.calls.refresh_token).toBe(1);
});

test('50 open sockets of 10 sessions cost no Redis command while nothing changes', async () => {
  const browsers = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      enterAs(a.url, sim, i % 2 === 0 ? 'player-ada' : 'player-bo'),
    ),
  );
  await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      open(i % 2 === 0 ? a.url : b.url, browsers[i % 10]!.cookie),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 300)); // the opening reads are done
  // Polling would send 2 reads per session per second (20 in each 1 s window), so no window would
  // be silent. A backend whose lease ran out (an event-loop stall on a loaded machine) has its
  // sockets read their record once: a window may carry that, so one silent window in ten is asked for.
  const sent = await quietWindow(
    raw,
    10,
    () => new Promise((resolve) => setTimeout(resolve, 1000)),
  );
  expect(sent).toEqual([]);
});

test('socket.io: 401 at the handshake without a login; with one, hello, profile, and a disconnect when the login ends', async () => {
  const before = a.output().length;
  const refused = await fetch(`${a.url}/socket.io/?EIO=4&transport=polling`);
  expect(refused.status).toBe(401);
  expect(await refused.json()).toEqual({ error: 'login_required' });
  // Reported as a player's refused request is: one debug line.
  expect(await reportedSince(a, before)).toEqual([
    expect.stringMatching(/^debug .*"part":"socket".*"code":"ERR_PLATFORM_LOGIN_REQUIRED"/),
  ]);
  // A direct WebSocket handshake (no polling first) is refused before the upgrade too.
  const direct = new WebSocket(
    `${a.url.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`,
  );
  const directStatus = await new Promise<number | undefined>((resolve) => {
    direct.once('unexpected-response', (_req, res) => resolve(res.statusCode));
    direct.once('open', () => resolve(undefined));
  });
  direct.on('error', () => undefined); // terminate() of a refused handshake reports one
  direct.terminate();
  expect(directStatus).toBe(401);

  const browser = await enterAs(a.url, sim, 'player-bo');
  const client = socketIoClient(b.url, {
    extraHeaders: { Cookie: browser.cookie },
    transports: ['websocket'],
    reconnection: false,
  });
  try {
    const hello = await new Promise<{ openId: string }>((resolve) => client.once('hello', resolve));
    expect(hello.openId).toBe('player-bo');
    const profile = (await client.emitWithAck('profile')) as { status: number };
    expect(profile.status).toBe(200);
    const ended = new Promise<unknown>((resolve) => client.once('platform:login_ended', resolve));
    const gone = new Promise<string>((resolve) => client.once('disconnect', resolve));
    const since = Date.now();
    await request(a.url).post('/logout').set('Cookie', browser.cookie);
    expect(await ended).toEqual({ code: 4401, error: 'login_required' });
    expect(await gone).toBe('io server disconnect');
    expect(Date.now() - since).toBeLessThanOrEqual(CLOSE_WITHIN_MS + LOAD_ALLOWANCE_MS);
  } finally {
    client.close();
  }
});

test('no token in any frame or log line', async () => {
  const browser = await enterAs(a.url, sim, 'player-ada');
  const socket = await open(b.url, browser.cookie);
  await socket.profile();
  const record = (await storedRecord(store, browser.sessionId)) as TokenRecord;
  const leaks = findLeaks(
    [
      ...opened.map((s, i) => ({ source: `socket ${i}`, text: JSON.stringify(s.frames) })),
      { source: 'process a', text: a.output() },
      { source: 'process b', text: b.output() },
    ],
    [
      { label: 'access token', value: record.accessToken },
      { label: 'refresh token', value: record.refreshToken },
    ],
  );
  expect(leaks).toEqual([]);
});
