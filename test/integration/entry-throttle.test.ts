// No outsider holds every player's entry (issue 41 items 1, 6, 7), against a real Redis, the
// simulator, and a platform that rate-limits its token endpoint over real HTTP: made-up codes cost
// each address at most its limit of platform calls, even in a concurrent burst and whatever the
// platform answers them with; addresses with failures share a budget of exchanges per second; and
// when the platform throttles anyway, a player from an address with no failure still enters.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import {
  RedisTokenStore,
  type PlatformLogin,
  type PlatformLoginOptions,
} from 'express-platform-login';
import { createTestApp, TEST_REDIRECT_URI } from '../helpers/test-app';
import { listen, sendFrom, type Answer, type Listening } from '../helpers/http-from';
import { startThrottlingPlatform, type ThrottlingPlatform } from '../helpers/throttling-platform';
import { waitUntil } from '../helpers/wait-until';
import { FROM_PLATFORM, JSON_ACCEPT, PLATFORM } from '../helpers/entry-requests';
import { useSimulatorAndRedis } from '../helpers/bed';

let sim: PlatformSimulator;
let redis: Redis;
const { apps } = useSimulatorAndRedis((bed) => ({ sim, redis } = bed));

const issue = (): string => sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
/** A made-up code that names the address sending it, so the platform's log tells whose it was. */
const madeUp = (from: string): string => `made-up-${from}-${randomBytes(9).toString('base64url')}`;
const newPrefix = (): string => `throttle-${randomBytes(6).toString('hex')}:`;
const errorOf = (answer: Answer): string => (JSON.parse(answer.body) as { error: string }).error;

interface Process {
  port: number;
  login: PlatformLogin;
}

/** One game process (its own store and login) on the shared Redis prefix, listening. */
async function startProcess(prefix: string, login: Partial<PlatformLoginOptions> = {}) {
  const store = new RedisTokenStore({ redis, prefix });
  const { app, login: platform } = createTestApp({
    sim,
    login: { platformOrigins: [PLATFORM], store, ...login },
  });
  const listening: Listening = await listen(app);
  apps.push(listening);
  return { port: listening.port, login: platform } satisfies Process;
}

const enter = (from: string, process: Process, code: string) =>
  sendFrom(from, process.port, `/platform/callback?code=${encodeURIComponent(code)}`, {
    headers: { ...FROM_PLATFORM, ...JSON_ACCEPT },
  });

/** How many of the platform's calls carried each outsider address's made-up codes. */
const callsBy = (codes: readonly string[], from: string): number =>
  codes.filter((code) => code.startsWith(`made-up-${from}-`)).length;

test('the trial: 120 made-up codes from 4 addresses at once against a platform allowing 10 calls a second; a real player on another process still enters', async () => {
  const platform: ThrottlingPlatform = await startThrottlingPlatform(sim.url, 10, 3600);
  apps.push(platform);
  const prefix = newPrefix();
  const a = await startProcess(prefix, { authUrl: platform.url });
  const b = await startProcess(prefix, { authUrl: platform.url });
  const holds: boolean[] = [];
  for (const p of [a, b]) p.login.on('exchangeHold', (e) => holds.push(e.held));

  const outsiders = ['127.0.0.31', '127.0.0.32', '127.0.0.33', '127.0.0.34'];
  const burst = await Promise.all(
    outsiders.flatMap((from) => Array.from({ length: 30 }, () => enter(from, a, madeUp(from)))),
  );
  // Every answer is a refusal the package documents; none is a 500.
  for (const answer of burst) {
    expect([400, 429, 502, 503]).toContain(answer.status);
    expect(['code_rejected', 'too_many_entries', 'platform_busy', 'platform_error']).toContain(
      errorOf(answer),
    );
  }
  // No outsider address reached the platform more than its limit allows.
  for (const from of outsiders) expect(callsBy(platform.codes, from)).toBeLessThanOrEqual(20);

  // The real player comes once the burst is over (the trial's "5 s later"; here, once the
  // platform's own second has passed), on the other process, from an address with no failure.
  await waitUntil(() => Date.now() - platform.lastCallAt > 1100, 'the burst to pass');
  const code = issue();
  const player = await enter('127.0.0.40', b, code);
  expect(player.status).toBe(303);
  expect(platform.codes.filter((sent) => sent === code)).toHaveLength(1);
  // Had the platform throttled the burst, the player's entry was the probe that ended the hold.
  if (platform.throttled > 0) {
    await waitUntil(() => holds.at(-1) === false, 'the hold to end');
    expect(holds).toContain(true);
  }
}, 60_000);

test('a concurrent burst from one address reaches the platform exactly its limit of times (issue 41 item 6)', async () => {
  const prefix = newPrefix();
  // The budget off: this is the per-address limit alone.
  const p = await startProcess(prefix, { entry: { failedExchangesPerSecond: 0 } });
  const from = '127.0.0.41';
  const answers = await Promise.all(Array.from({ length: 60 }, () => enter(from, p, madeUp(from))));
  expect(sim.calls.authorization_code).toBe(20);
  expect(answers.filter((answer) => answer.status === 400)).toHaveLength(20);
  const refused = answers.filter((answer) => answer.status === 429);
  expect(refused).toHaveLength(40);
  for (const answer of refused) expect(errorOf(answer)).toBe('too_many_entries');
  // Another address is unaffected.
  expect((await enter('127.0.0.42', p, issue())).status).toBe(303);
});

test.each([
  ['an error object in a 200 body', { kind: 'platform-error' as const, errNo: 40029 }],
  ['an OAuth error in a 200 body', { kind: 'error-body-200' as const, error: 'invalid_grant' }],
  ['an HTML page with 200', { kind: 'html' as const }],
])(
  'made-up codes answered with %s: each one counted, so 60 cost the limit of calls (issue 41 item 7)',
  async (_how, fault) => {
    const p = await startProcess(newPrefix(), { entry: { failedExchangesPerSecond: 0 } });
    sim.injectFault(fault, { grant: 'authorization_code' });
    const from = '127.0.0.43';
    const statuses: number[] = [];
    for (let i = 0; i < 60; i += 1) statuses.push((await enter(from, p, madeUp(from))).status);
    expect(sim.calls.authorization_code).toBe(20);
    expect(statuses.slice(20)).toEqual(Array(40).fill(429));
  },
);

test('addresses with failures share the budget of exchanges per second; an address with none is not held by it', async () => {
  const prefix = newPrefix();
  const a = await startProcess(prefix);
  const b = await startProcess(prefix);
  const outsiders = ['127.0.0.51', '127.0.0.52', '127.0.0.53', '127.0.0.54', '127.0.0.55'];
  for (const from of outsiders) expect((await enter(from, a, madeUp(from))).status).toBe(400);
  sim.resetCalls();
  const startedAt = Date.now();
  const wave = await Promise.all(
    outsiders.flatMap((from) =>
      [a, b].flatMap((p) => Array.from({ length: 3 }, () => enter(from, p, madeUp(from)))),
    ),
  );
  const seconds = Math.ceil((Date.now() - startedAt) / 1000);
  // The default budget, 3 a second, across both processes: at most one budget per window touched.
  expect(sim.calls.authorization_code).toBeLessThanOrEqual(3 * (seconds + 1));
  const refused = wave.filter((answer) => answer.status === 429);
  expect(refused.length).toBeGreaterThanOrEqual(30 - 3 * (seconds + 1));
  for (const answer of refused) {
    expect(errorOf(answer)).toBe('too_many_entries');
    expect(answer.headers['retry-after']).toBe('1');
  }
  // A player from an address with no failure enters at once, whatever the budget says.
  expect((await enter('127.0.0.56', b, issue())).status).toBe(303);
});
