// Several real game backend processes on one Redis behave as one service: one refresh per session
// across all of them, and a rotating platform never sees an old refresh token.
import { randomUUID } from 'node:crypto';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { platformLogin, RedisTokenStore } from 'express-platform-login';
import type { AppProcess } from '../helpers/spawn-game-backends';
import { expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { useGameBackends } from '../helpers/bed';

const PROCESSES = 4;
let sim: PlatformSimulator;
let apps: AppProcess[] = [];
let store: RedisTokenStore;
const prefix = `mp-${randomUUID().slice(0, 8)}:`;

useGameBackends(PROCESSES, prefix, (bed) => ({ sim, store, apps } = bed));

/** Enters through one of the processes; resolves the session cookie and the session id. */
async function enter(
  openId = 'player-ada',
  through = 0,
): Promise<{ cookie: string; sessionId: string }> {
  const code = sim.issueCode({ redirectUri: 'http://127.0.0.1:3999/platform/callback', openId });
  const res = await fetch(`${apps[through]!.url}/platform/callback?code=${code}`, {
    redirect: 'manual',
  });
  expect(res.status).toBe(303);
  const cookie = res.headers
    .getSetCookie()
    .find((c) => c.startsWith('connect.sid='))!
    .split(';')[0]!;
  const sessionId = /^s:(.+)\.[^.]+$/.exec(
    decodeURIComponent(cookie.slice('connect.sid='.length)),
  )![1]!;
  return { cookie, sessionId };
}

async function burst(
  cookie: string,
  count: number,
): Promise<{ status: number; accessToken?: string; pid?: number }[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const res = await fetch(`${apps[i % PROCESSES]!.url}/api/token`, {
        headers: { cookie, accept: 'application/json' },
      });
      const body = (await res.json()) as { accessToken?: string; pid?: number };
      return { status: res.status, ...body };
    }),
  );
}

test('100 concurrent requests across 4 processes on a session that needs a refresh: exactly 1 refresh call', async () => {
  const { cookie, sessionId } = await enter();
  await rewriteRecord(store, sessionId, expiringIn(-1000));
  sim.advanceClock(3 * 3600);
  sim.injectFault({ kind: 'latency', ms: 150 }, { grant: 'refresh_token' });
  sim.resetCalls();
  const answers = await burst(cookie, 100);
  sim.clearFaults();
  expect(answers.map((a) => a.status)).toEqual(Array(100).fill(200));
  expect(new Set(answers.map((a) => a.pid)).size).toBe(PROCESSES);
  expect(sim.calls.refresh_token).toBe(1);
  expect(new Set(answers.map((a) => a.accessToken)).size).toBe(1);
});

test('a rotating platform: repeated refresh storms across processes never cause an invalid_grant', async () => {
  sim.setRotation(true);
  try {
    const { cookie, sessionId } = await enter();
    sim.resetCalls();
    for (let round = 0; round < 5; round += 1) {
      await rewriteRecord(store, sessionId, expiringIn(-1000));
      sim.advanceClock(3 * 3600);
      const answers = await burst(cookie, 40);
      expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    }
    expect(sim.calls.refresh_token).toBe(5);
    const stats = await Promise.all(
      apps.map(async (app) => (await fetch(`${app.url}/stats`)).json()),
    );
    expect(stats.map((s) => (s as { reauths: number }).reauths)).toEqual(Array(PROCESSES).fill(0));
    expect(await storedRecord(store, sessionId)).toBeDefined();
  } finally {
    sim.setRotation(false);
  }
});

test('logoutPlayer ends every session of a player on every process at once; others stay', async () => {
  const operator = platformLogin({
    authUrl: sim.url,
    clientId: 'demo-game',
    clientSecret: 'demo-secret',
    redirectUri: 'http://127.0.0.1:3999/platform/callback',
    platformOrigins: [new URL(sim.url).origin],
    store,
  });
  // player-cy is used by no other test here, so the counts are exact.
  const cy = [
    await enter('player-cy', 0),
    await enter('player-cy', 1),
    await enter('player-cy', 2),
  ];
  const bo = await enter('player-bo', 3);
  expect(await operator.sessionsOf('player-cy')).toBe(3);

  expect(await operator.logoutPlayer('player-cy')).toBe(3);
  expect(await operator.sessionsOf('player-cy')).toBe(0);
  for (const session of cy) {
    const answers = await burst(session.cookie, PROCESSES);
    expect(answers.map((a) => a.status)).toEqual(Array(PROCESSES).fill(401));
  }
  const still = await burst(bo.cookie, PROCESSES);
  expect(still.map((a) => a.status)).toEqual(Array(PROCESSES).fill(200));
  expect(await operator.sessionsOf('player-bo')).toBe(1);
});
