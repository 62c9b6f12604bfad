// A game backend process dies (SIGKILL) in the middle of a refresh, while the other processes keep
// serving on the same Redis: once while it holds the refresh lock and waits for a slow platform, and
// once after the platform answered and before the new record was written.
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { RedisTokenStore } from 'express-platform-login';
import { hashSessionId } from '../../lib/core/hash';
import { startAppProcess, stopAppProcesses, type AppProcess } from '../helpers/spawn-game-backends';
import { enterThrough, expectOneNewToken, tokenFrom } from '../helpers/process-entry';
import type { ApiAnswer, ProcessLogin } from '../helpers/process-entry';
import { expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { waitUntil } from '../helpers/wait-until';
import { useSimulatorAndRedis } from '../helpers/bed';

/** One attempt of at most 1 s and no retry. */
const LOGIN_OPTIONS = JSON.stringify({ tokenClient: { timeoutMs: 1000, refreshRetries: 0 } });
/** The refresh lock lives 5 s unless its living holder renews it (see platform-login.ts). */
const LOCK_TTL_MS = 5000;
/** The survivors' requests arrive a little after the kill, as players' next requests would. */
const ARRIVE_AFTER_MS = 500;

let sim: PlatformSimulator;
let redis: Redis;
let store: RedisTokenStore;
let survivors: AppProcess[] = [];
/** One process per test that kills it, started with the survivors to save start-up time. */
let victims: { holdingLock: AppProcess; rotationOff: AppProcess; rotationOn: AppProcess };
const started: AppProcess[] = [];
const prefix = `kill-${randomUUID().slice(0, 8)}:`;

const startProcess = async (env: Record<string, string> = {}): Promise<AppProcess> => {
  const app = await startAppProcess({
    REDIS_URL: process.env.REDIS_URL!,
    SIM_URL: sim.url,
    KEY_PREFIX: prefix,
    LOGIN_OPTIONS,
    ...env,
  });
  started.push(app);
  return app;
};

useSimulatorAndRedis((started) => ({ sim, redis } = started));
afterAll(() => stopAppProcesses(started));
beforeAll(async () => {
  store = new RedisTokenStore({ redis, prefix: `${prefix}t:` });
  const dieBeforeWrite = { KILL_BEFORE_REFRESH_WRITE: '1' };
  const [one, two, holdingLock, rotationOff, rotationOn] = await Promise.all([
    startProcess(),
    startProcess(),
    startProcess(),
    startProcess(dieBeforeWrite),
    startProcess(dieBeforeWrite),
  ]);
  survivors = [one!, two!];
  victims = { holdingLock: holdingLock!, rotationOff: rotationOff!, rotationOn: rotationOn! };
}, 60_000);

beforeEach(() => sim.setRotation(false));

/** Resolves when the process has died of SIGKILL. */
async function diedOfSigkill(victim: AppProcess): Promise<void> {
  if (victim.child.signalCode === null && victim.child.exitCode === null) {
    await once(victim.child, 'exit');
  }
  expect(victim.child.signalCode).toBe('SIGKILL');
}

/** `count` concurrent API calls with the login's cookie, spread over the surviving processes. */
function burstOnSurvivors(login: ProcessLogin, count: number): Promise<ApiAnswer[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => tokenFrom(survivors[i % survivors.length]!.url, login)),
  );
}

/** A login whose access token has expired, for us and for the platform: the next call refreshes. */
async function expiredLogin(through: AppProcess) {
  const login = await enterThrough(through.url, sim);
  const before = await rewriteRecord(store, login.sessionId, expiringIn(-1000));
  sim.advanceClock(3 * 3600);
  sim.resetCalls();
  return { login, before };
}

test('killed while holding the refresh lock: the lock expires, another process refreshes and serves', async () => {
  const victim = victims.holdingLock;
  const { login, before } = await expiredLogin(victim);
  sim.injectFault({ kind: 'latency', ms: 3000 }, { grant: 'refresh_token', times: 1 });

  const doomed = tokenFrom(victim.url, login).then(
    () => 'answered',
    () => 'connection lost',
  );
  await waitUntil(() => sim.calls.refresh_token === 1, 'the victim to call the platform');
  victim.child.kill('SIGKILL');
  await diedOfSigkill(victim);
  expect(await doomed).toBe('connection lost');
  // The dead process's lock is still in Redis: nobody may refresh until it expires.
  const lockTtl = await redis.pttl(`${prefix}t:l:${hashSessionId(login.sessionId)}`);
  expect(lockTtl).toBeGreaterThan(0);
  expect(lockTtl).toBeLessThanOrEqual(LOCK_TTL_MS);

  await sleep(ARRIVE_AFTER_MS);
  const token = expectOneNewToken(await burstOnSurvivors(login, 20), before);
  // The victim's call and exactly one takeover: the waiting requests did not call the platform.
  expect(sim.calls.refresh_token).toBe(2);
  const after = await storedRecord(store, login.sessionId);
  expect(after!.version).toBe(before.version + 1);
  expect(after!.accessToken).toBe(token);
});

describe('killed after the platform answered a refresh, before the store write', () => {
  test('rotation off: the old refresh token still works, another process refreshes and serves', async () => {
    const victim = victims.rotationOff;
    const { login, before } = await expiredLogin(victim);

    await expect(tokenFrom(victim.url, login)).rejects.toThrow();
    await diedOfSigkill(victim);
    expect(sim.calls.refresh_token).toBe(1); // the platform answered…
    expect(await storedRecord(store, login.sessionId)).toEqual(before); // …and nothing was written

    await sleep(ARRIVE_AFTER_MS);
    const answers = await burstOnSurvivors(login, 20);
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.body.accessToken)).size).toBe(1);
    expect(sim.calls.refresh_token).toBe(2);
    const after = await storedRecord(store, login.sessionId);
    expect(after!.version).toBe(before.version + 1);
    expect(after!.refreshToken).toBe(before.refreshToken);
  });

  test('rotation on: the rotated refresh token died with the process, so the player must enter again', async () => {
    sim.setRotation(true);
    const victim = victims.rotationOn;
    const { login, before } = await expiredLogin(victim);

    await expect(tokenFrom(victim.url, login)).rejects.toThrow();
    await diedOfSigkill(victim);
    expect(sim.calls.refresh_token).toBe(1);
    expect(await storedRecord(store, login.sessionId)).toEqual(before);

    // The platform rotated the refresh token we still hold: it answers invalid_grant, the record
    // is deleted and the player is asked to enter again. No design can avoid this without the
    // platform's help (a grace period for the previous refresh token).
    await sleep(ARRIVE_AFTER_MS);
    const first = await tokenFrom(survivors[0]!.url, login);
    expect(first).toEqual({ status: 401, body: { error: 'reauth_required' } });
    expect(sim.calls.refresh_token).toBe(2);
    expect(await storedRecord(store, login.sessionId)).toBeUndefined();
    expect(await tokenFrom(survivors[1]!.url, login)).toEqual({
      status: 401,
      body: { error: 'login_required' },
    });

    // A new entry works on every process.
    const again = await enterThrough(survivors[1]!.url, sim);
    for (const survivor of survivors)
      expect((await tokenFrom(survivor.url, again)).status).toBe(200);
  });
});
