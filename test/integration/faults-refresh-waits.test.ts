// Two real game backend processes on one Redis while the platform misbehaves: a token that still
// works never waits on the platform or on a dead holder's lock, the platform's Retry-After holds
// every process back, and every Redis key a login writes expires with its session.
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { RedisTokenStore } from 'express-platform-login';
import { hashOpenId, hashSessionId } from '../../lib/core/hash';
import type { AppProcess } from '../helpers/spawn-game-backends';
import { enterThrough, expectOneNewToken, tokenFrom } from '../helpers/process-entry';
import type { ApiAnswer, ProcessLogin } from '../helpers/process-entry';
import { expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { waitUntil } from '../helpers/wait-until';
import { useGameBackends } from '../helpers/bed';

/** The player enterThrough() logs in when it is given none. */
const DEMO_OPEN_ID = 'player-ada';
let sim: PlatformSimulator;
let redis: Redis;
let store: RedisTokenStore;
let apps: AppProcess[] = [];
const prefix = `waits-${randomUUID().slice(0, 8)}:`;
const recordKey = (sessionId: string): string => `${prefix}t:t:${hashSessionId(sessionId)}`;
const lockKey = (sessionId: string): string => `${prefix}t:l:${hashSessionId(sessionId)}`;

useGameBackends(2, prefix, (bed) => ({ sim, redis, store, apps } = bed));

/** A login through the first process whose access token expired a second ago (the platform's clock moved on too). */
async function expiredLogin() {
  const login = await enterThrough(apps[0]!.url, sim);
  const before = await rewriteRecord(store, login.sessionId, expiringIn(-1000));
  sim.advanceClock(3 * 3600);
  return { login, before };
}

/** `count` concurrent API calls with the login's cookie, alternating between the two processes. */
function burst(login: ProcessLogin, count: number): Promise<ApiAnswer[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => tokenFrom(apps[i % apps.length]!.url, login)),
  );
}

// Both scenarios wait out a dead holder's 5 s lock: they start together and wait side by side. Each
// refreshes exactly once: two platform calls in all, and each scenario's record or token is new.
test('a lock orphaned by a holder that died: a usable token is served at once and refreshed once the lock frees; an expired one is served once it frees, with one refresh', async () => {
  const usable = await enterThrough(apps[0]!.url, sim);
  const usableBefore = await rewriteRecord(store, usable.sessionId, expiringIn(30_000));
  const expired = await expiredLogin();
  // What a SET that Redis applied after its client gave up leaves behind: a lock nobody renews.
  for (const { sessionId } of [usable, expired.login])
    await redis.set(lockKey(sessionId), '1|a-dead-owner', 'PX', 5000);

  const expiredAnswers = burst(expired.login, 6);
  const answers = await burst(usable, 6);
  expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
  expect(new Set(answers.map((a) => a.body.accessToken))).toEqual(
    new Set([usableBefore.accessToken]),
  );
  // Neither lock has freed yet: nobody called the platform.
  expect(sim.calls.refresh_token).toBe(0);

  // The expired token: served once its lock frees, with a new token.
  expectOneNewToken(await expiredAnswers, expired.before);
  // The usable token: the waiting refresh goes on in the background and takes over once the dead
  // lock expires.
  await waitUntil(
    async () => (await storedRecord(store, usable.sessionId))!.version === usableBefore.version + 1,
    'the refresh after the orphaned lock expired',
  );
  expect((await storedRecord(store, expired.login.sessionId))!.version).toBe(
    expired.before.version + 1,
  );
  expect(sim.calls.refresh_token).toBe(2);
}, 30_000);

test("the platform throttles with Retry-After: 30: one call across both processes, every player told to wait the platform's figure", async () => {
  const { login, before } = await expiredLogin();
  sim.injectFault({ kind: 'throttle', retryAfterSeconds: 30 }, { grant: 'refresh_token' });

  const first = await burst(login, 10);
  // The platform would answer now, but asked for 30 s: nobody asks before that.
  sim.clearFaults();
  const later = await burst(login, 6);
  const answers = [...first, ...later];
  for (const answer of answers) {
    expect([answer.status, answer.body]).toEqual([503, { error: 'platform_unavailable' }]);
    expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(29);
  }
  expect(Math.max(...answers.map((a) => Number(a.retryAfter)))).toBe(30);
  expect(sim.calls.refresh_token).toBe(1);
  expect(await storedRecord(store, login.sessionId)).toEqual(before);
  // The hold lives in Redis with the platform's lifetime, for processes that start later too.
  const holdTtl = await redis.pttl(`${prefix}t:h:${hashSessionId(login.sessionId)}`);
  expect(holdTtl).toBeGreaterThan(25_000);
  expect(holdTtl).toBeLessThanOrEqual(30_000);
}, 30_000);

describe('key lifetimes', () => {
  const keysOf = async (): Promise<Set<string>> => new Set(await redis.keys(`${prefix}*`));

  test('after a login, every new Redis key expires no later than its session', async () => {
    const existing = await keysOf();
    const login = await enterThrough(apps[1]!.url, sim);
    const created = [...(await keysOf())].filter((key) => !existing.has(key));
    const sessionKey = `${prefix}s:${login.sessionId}`;
    expect(created).toContain(sessionKey);
    expect(created).toContain(recordKey(login.sessionId));
    // The player's index may exist from earlier logins; it is rewritten by this one.
    const indexKey = `${prefix}t:p:${hashOpenId(DEMO_OPEN_ID)}`;
    expect(created.some((key) => key.startsWith(`${prefix}t:k:`))).toBe(true); // the code claim
    const sessionTtl = await redis.pttl(sessionKey);
    for (const key of [...created, indexKey]) {
      const ttl = await redis.pttl(key);
      expect([key, ttl > 0]).toEqual([key, true]);
      expect([key, ttl <= sessionTtl + 1000]).toEqual([key, true]);
    }
  });

  test('an active session keeps its tokens: past half its lifetime, a request renews the record', async () => {
    const login = await enterThrough(apps[0]!.url, sim);
    const sessionKey = `${prefix}s:${login.sessionId}`;
    // As if most of the session's lifetime had passed since the record's lifetime was set.
    const session = JSON.parse((await redis.get(sessionKey))!) as {
      platformLogin: { recordExpiresAt: number };
    };
    session.platformLogin.recordExpiresAt = Date.now() + 60_000;
    await redis.set(sessionKey, JSON.stringify(session), 'KEEPTTL');
    await redis.pexpire(recordKey(login.sessionId), 60_000);

    expect((await tokenFrom(apps[1]!.url, login)).status).toBe(200);
    const renewed = await redis.pttl(recordKey(login.sessionId));
    expect(renewed).toBeGreaterThan(60_000);
    expect(renewed).toBeLessThanOrEqual((await redis.pttl(sessionKey)) + 1000);
    // The next request finds nothing to renew: the session remembers the new lifetime.
    const marker = JSON.parse((await redis.get(sessionKey))!) as typeof session;
    expect(marker.platformLogin.recordExpiresAt).toBeGreaterThan(Date.now() + 60_000);
  });
});

// Last: its refresh hangs on in the background (up to every attempt's timeout) after the test.
test('a hanging platform and a token with 30 s left: every request on both processes is answered 200 with the current token', async () => {
  const login = await enterThrough(apps[0]!.url, sim);
  const before = await rewriteRecord(store, login.sessionId, expiringIn(30_000));
  sim.injectFault({ kind: 'hang' }, { grant: 'refresh_token' });

  const first = await burst(login, 6);
  const second = await burst(login, 4);
  for (const answer of [...first, ...second]) {
    expect(answer.status).toBe(200);
    expect(answer.body.accessToken).toBe(before.accessToken);
  }
  // One refresh under way for the session across both processes, the others wait for its record.
  expect(sim.calls.refresh_token).toBe(1);
  expect(await storedRecord(store, login.sessionId)).toEqual(before);
}, 30_000);
