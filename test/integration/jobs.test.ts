// A job with no request reaches a player's token by openId (login.forPlayer), in a worker process of
// its own, against two game backend processes on a real redis-server and the simulator: the
// freshest of the player's logins, login_required with none or after logoutPlayer, and a refresh
// shared with the player's sockets under the same lock.
import request from 'supertest';
import {
  LoginRequiredError,
  platformLogin,
  RedisTokenStore,
  type PlatformLogin,
} from 'express-platform-login';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { loginOptions } from '../helpers/test-app';
import {
  enterAs,
  openSocket,
  type Browser,
  type SocketProcess,
  type TestSocket,
} from '../helpers/spawn-socket-backends';
import { useSocketBackends } from '../helpers/socket-bed';

const PREFIX = 'jobs:';

let sim: PlatformSimulator;
let store: RedisTokenStore;
/** The worker: a PlatformLogin of its own on the same Redis, with no HTTP server. */
let worker: PlatformLogin;
let a: SocketProcess;
let b: SocketProcess;
const sockets: TestSocket[] = [];
useSocketBackends(PREFIX, (bed) => {
  ({ sim, store, a, b } = bed);
  worker = platformLogin(loginOptions(sim, { store }));
});
afterAll(() => {
  for (const socket of sockets) socket.ws.terminate();
});

/** The access token a route of the session's own process sees. */
const tokenOf = async (url: string, browser: Browser): Promise<string> =>
  (await request(url).get('/api/token').set('Cookie', browser.cookie)).body.accessToken as string;

test('a player with two logins: the job uses the freshest (the latest entry), and its fetch reaches the open API', async () => {
  const phone = await enterAs(a.url, sim, 'player-ada');
  await new Promise((resolve) => setTimeout(resolve, 20));
  const laptop = await enterAs(b.url, sim, 'player-ada');
  const [phoneToken, laptopToken] = [await tokenOf(a.url, phone), await tokenOf(b.url, laptop)];
  expect(phoneToken).not.toBe(laptopToken);

  const job = await worker.forPlayer('player-ada');
  expect(job.user.openId).toBe('player-ada');
  expect(await job.token()).toBe(laptopToken);
  const answer = await job.fetch('/userinfo');
  expect(answer.status).toBe(200);
  expect(await answer.json()).toMatchObject({ open_id: 'player-ada' });
  // Printing or serialising it shows no token.
  expect(JSON.stringify(job)).not.toContain(laptopToken);
});

test('a player with no live login: login_required', async () => {
  await expect(worker.forPlayer('player-nobody')).rejects.toBeInstanceOf(LoginRequiredError);
  await expect(worker.forPlayer('player-nobody')).rejects.toMatchObject({
    error: 'login_required',
  });
});

test('after logoutPlayer (on a backend process): login_required, and the job holding a login gets it too', async () => {
  await enterAs(a.url, sim, 'player-cy');
  const held = await worker.forPlayer('player-cy');
  await request(b.url).post('/admin/logout-player?openId=player-cy');
  await expect(worker.forPlayer('player-cy')).rejects.toMatchObject({ error: 'login_required' });
  // The platform ends the token too (its clock passes): the held login cannot refresh a deleted record.
  sim.advanceClock(3 * 3600);
  await expect(held.fetch('/userinfo')).rejects.toMatchObject({ error: 'login_required' });
});

test("a job and the player's sockets find the token expired together: one refresh, under the same lock", async () => {
  const browser = await enterAs(a.url, sim, 'player-bo');
  for (const url of [a.url, b.url]) sockets.push(await openSocket(url, browser.cookie));
  const job = await worker.forPlayer('player-bo');
  sim.advanceClock(3 * 3600); // the platform's clock passes the token's expiry: the open API says 401
  sim.resetCalls();
  const [jobAnswer, ...profiles] = await Promise.all([
    job.fetch('/userinfo'),
    ...sockets.slice(-2).map((socket) => socket.profile()),
  ]);
  expect(jobAnswer.status).toBe(200);
  expect(profiles.map((profile) => profile.status)).toEqual([200, 200]);
  expect(sim.calls.refresh_token).toBe(1);
});
