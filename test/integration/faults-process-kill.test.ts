// A game backend process dies (SIGKILL) in the middle of a refresh, while the other processes keep
// serving on the same Redis: once while it holds the refresh lock and waits for a slow platform, and
// once after the platform answered and before the new record was written.
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { RedisTokenStore } from 'express-platform-login';
import { hashSessionId } from '../../lib/core/hash';
import { startAppProcess, stopAppProcesses, type AppProcess } from '../helpers/spawn-game-backends';
import { START_DEADLINE_MS } from '../helpers/on-sources';
import { enterThrough, expectOneNewToken, tokenFrom } from '../helpers/process-entry';
import type { ApiAnswer, ProcessLogin } from '../helpers/process-entry';
import { expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { waitUntil } from '../helpers/wait-until';

/**
 * One attempt and no retry, which outlasts the victim's slow call: it must still be waiting for the
 * platform when it is killed, however long the kill takes on a loaded machine.
 */
const LOGIN_OPTIONS = JSON.stringify({ tokenClient: { timeoutMs: 20_000, refreshRetries: 0 } });
/** The refresh lock lives 5 s unless its living holder renews it (see platform-login.ts). */
const LOCK_TTL_MS = 5000;
/** The survivors' requests arrive a little after the kill, as players' next requests would. */
const ARRIVE_AFTER_MS = 500;

/**
 * One simulated platform and its processes per scenario, so that the scenarios, each waiting on a
 * lock's lifetime, run side by side: a platform's call counts and rotation are the scenario's own.
 */
interface Bed {
  sim: PlatformSimulator;
  store: RedisTokenStore;
  prefix: string;
  /** The process the scenario kills. */
  victim: AppProcess;
  /** The processes that keep serving. */
  survivors: AppProcess[];
}

let redis: Redis;
const sims: PlatformSimulator[] = [];
const started: AppProcess[] = [];
let beds: { holdingLock: Bed; rotationOff: Bed; rotationOn: Bed };
const run = randomUUID().slice(0, 8);

const startProcess = async (
  sim: PlatformSimulator,
  prefix: string,
  env: Record<string, string> = {},
): Promise<AppProcess> => {
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

/** A platform with `rotation`, a victim started with `victimEnv` and two survivors. */
async function startBed(name: string, rotation: boolean, victimEnv: Record<string, string> = {}) {
  const sim = await startSimulator();
  sims.push(sim);
  sim.setRotation(rotation);
  const prefix = `kill-${run}-${name}:`;
  const [victim, ...survivors] = await Promise.all([
    startProcess(sim, prefix, victimEnv),
    startProcess(sim, prefix),
    startProcess(sim, prefix),
  ]);
  const store = new RedisTokenStore({ redis, prefix: `${prefix}t:` });
  return { sim, store, prefix, victim: victim!, survivors };
}

afterAll(async () => {
  await stopAppProcesses(started);
  await Promise.all(sims.map((sim) => sim.close()));
  redis?.disconnect();
});
beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL!);
  const dieBeforeWrite = { KILL_BEFORE_REFRESH_WRITE: '1' };
  const [holdingLock, rotationOff, rotationOn] = await Promise.all([
    startBed('lock', false),
    startBed('off', false, dieBeforeWrite),
    startBed('on', true, dieBeforeWrite),
  ]);
  beds = { holdingLock: holdingLock!, rotationOff: rotationOff!, rotationOn: rotationOn! };
  // Nine processes start at once: beside a CPU-bound process, each may take START_DEADLINE_MS.
}, 2 * START_DEADLINE_MS);

/** Resolves when the process has died of SIGKILL. */
async function diedOfSigkill(victim: AppProcess): Promise<void> {
  if (victim.child.signalCode === null && victim.child.exitCode === null) {
    await once(victim.child, 'exit');
  }
  expect(victim.child.signalCode).toBe('SIGKILL');
}

/** `count` concurrent API calls with the login's cookie, spread over the surviving processes. */
function burstOnSurvivors(
  { survivors }: Bed,
  login: ProcessLogin,
  count: number,
): Promise<ApiAnswer[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => tokenFrom(survivors[i % survivors.length]!.url, login)),
  );
}

/** A login whose access token has expired, for us and for the platform: the next call refreshes. */
async function expiredLogin({ sim, store, victim }: Bed) {
  const login = await enterThrough(victim.url, sim);
  const before = await rewriteRecord(store, login.sessionId, expiringIn(-1000));
  sim.advanceClock(3 * 3600);
  sim.resetCalls();
  return { login, before };
}

// The scenarios wait side by side, each on its own bed.
test.concurrent(
  'killed while holding the refresh lock: the lock expires, another process refreshes and serves',
  async () => {
    const bed = beds.holdingLock;
    const { sim, store, victim } = bed;
    const { login, before } = await expiredLogin(bed);
    sim.injectFault({ kind: 'latency', ms: 10_000 }, { grant: 'refresh_token', times: 1 });

    const doomed = tokenFrom(victim.url, login).then(
      () => 'answered',
      () => 'connection lost',
    );
    await waitUntil(() => sim.calls.refresh_token === 1, 'the victim to call the platform');
    victim.child.kill('SIGKILL');
    await diedOfSigkill(victim);
    expect(await doomed).toBe('connection lost');
    // The dead process's lock is still in Redis: nobody may refresh until it expires.
    const lockTtl = await redis.pttl(`${bed.prefix}t:l:${hashSessionId(login.sessionId)}`);
    expect(lockTtl).toBeGreaterThan(0);
    expect(lockTtl).toBeLessThanOrEqual(LOCK_TTL_MS);

    await sleep(ARRIVE_AFTER_MS);
    const token = expectOneNewToken(await burstOnSurvivors(bed, login, 20), before);
    // The victim's call and exactly one takeover: the waiting requests did not call the platform.
    expect(sim.calls.refresh_token).toBe(2);
    const after = await storedRecord(store, login.sessionId);
    expect(after!.version).toBe(before.version + 1);
    expect(after!.accessToken).toBe(token);
  },
);

const KILLED_BEFORE_WRITE = 'killed after the platform answered a refresh, before the store write';
test.concurrent(
  `${KILLED_BEFORE_WRITE}, rotation off: the old refresh token still works, another process refreshes and serves`,
  async () => {
    const bed = beds.rotationOff;
    const { sim, store, victim } = bed;
    const { login, before } = await expiredLogin(bed);

    await expect(tokenFrom(victim.url, login)).rejects.toThrow();
    await diedOfSigkill(victim);
    expect(sim.calls.refresh_token).toBe(1); // the platform answered…
    expect(await storedRecord(store, login.sessionId)).toEqual(before); // …and nothing was written

    await sleep(ARRIVE_AFTER_MS);
    const answers = await burstOnSurvivors(bed, login, 20);
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.body.accessToken)).size).toBe(1);
    expect(sim.calls.refresh_token).toBe(2);
    const after = await storedRecord(store, login.sessionId);
    expect(after!.version).toBe(before.version + 1);
    expect(after!.refreshToken).toBe(before.refreshToken);
  },
);

test.concurrent(
  `${KILLED_BEFORE_WRITE}, rotation on: the rotated refresh token died with the process, so the player must enter again`,
  async () => {
    const bed = beds.rotationOn;
    const { sim, store, survivors, victim } = bed;
    const { login, before } = await expiredLogin(bed);

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
  },
);
