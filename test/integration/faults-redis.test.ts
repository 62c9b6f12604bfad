// Redis in trouble under load, with real game backend processes on a private redis-server (never
// the shared one): frozen with SIGSTOP, then killed and restarted on the same port. Every request
// answers 503 store_unavailable within the bound, none hangs or crashes a process, and the same
// processes serve the same login again once Redis is back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { startAppProcess, stopAppProcesses, type AppProcess } from '../helpers/spawn-game-backends';
import {
  apiAnswerOf,
  enterThrough,
  tokenFrom,
  type ApiAnswer,
  type ProcessLogin,
} from '../helpers/process-entry';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { TEST_REDIRECT_URI } from '../helpers/test-app';
import { waitUntil } from '../helpers/wait-until';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';

const PROCESSES = 3;
/** The behaviour under test: an answer within about 2 s (README: ~1.5 s), never a hang. */
const BOUND_MS = 2500 + LOAD_ALLOWANCE_MS;
/** Every write on disk before it is acknowledged, so a killed Redis comes back with its data. */
const DURABLE = ['--appendonly', 'yes', '--appendfsync', 'always'];

let sim: PlatformSimulator;
let server: TestRedisServer;
let apps: AppProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'epl-faults-redis-'));

beforeAll(async () => {
  sim = await startSimulator();
  server = await startRedisServer(DURABLE, { dir });
  apps = await Promise.all(
    Array.from({ length: PROCESSES }, () =>
      startAppProcess({ REDIS_URL: server.url, SIM_URL: sim.url, REDIS_FAIL_FAST: '1' }),
    ),
  );
}, 60_000);

afterAll(async () => {
  await stopAppProcesses(apps);
  server.resume();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
  await sim.close();
});

/** What an entry through the process at `url` with a fresh code answered. */
async function entryAt(url: string): Promise<ApiAnswer> {
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
  const res = await request(url)
    .get(`/platform/callback?code=${code}`)
    .set('Accept', 'application/json');
  return apiAnswerOf(res);
}

/**
 * `count` concurrent requests over every process: API calls with the login's cookie (the session
 * store and the token store) and entries with fresh codes (the code claim). Resolves their answers
 * and how long the slowest took.
 */
async function load(login: ProcessLogin, count: number) {
  const startedAt = Date.now();
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const url = apps[i % PROCESSES]!.url;
      return i % 2 === 0 ? tokenFrom(url, login) : entryAt(url);
    }),
  );
  return { answers, elapsedMs: Date.now() - startedAt };
}

/** Every process answers the login with 200; resolves their answers. */
const servedEverywhere = async (login: ProcessLogin): Promise<ApiAnswer[] | undefined> => {
  const answers = await Promise.all(apps.map((app) => tokenFrom(app.url, login)));
  return answers.every((answer) => answer.status === 200) ? answers : undefined;
};

function expectAllStoreUnavailable(answers: ApiAnswer[]): void {
  expect(answers.map((a) => a.status)).toEqual(Array(answers.length).fill(503));
  for (const answer of answers) {
    expect(answer.body).toEqual({ error: 'store_unavailable' });
    expect(answer.retryAfter).toBe('2');
  }
}

const alive = (): boolean[] =>
  apps.map((app) => app.child.exitCode === null && app.child.signalCode === null);

test('Redis frozen (SIGSTOP) under load: 503 store_unavailable within the bound; served again after SIGCONT', async () => {
  const login = await enterThrough(apps[0]!.url, sim);
  const before = await servedEverywhere(login);
  expect(before).toBeDefined();

  server.pause();
  let stalled: Awaited<ReturnType<typeof load>>;
  try {
    stalled = await load(login, 30);
  } finally {
    server.resume();
  }
  expectAllStoreUnavailable(stalled.answers);
  expect(stalled.elapsedMs).toBeLessThan(BOUND_MS);

  // The same processes (no restart) serve the same login with the same token, and new entries land.
  let after: ApiAnswer[] | undefined;
  await waitUntil(async () => (after = await servedEverywhere(login)) !== undefined, 'recovery');
  expect(after!.map((a) => a.body.pid)).toEqual(before!.map((a) => a.body.pid));
  expect(after!.map((a) => a.body.accessToken)).toEqual(before!.map((a) => a.body.accessToken));
  for (const app of apps) expect((await entryAt(app.url)).status).toBe(303);
  expect(alive()).toEqual(Array(PROCESSES).fill(true));
});

test('Redis killed and restarted on the same port: 503 while it is gone, then the same login is served again', async () => {
  const login = await enterThrough(apps[1]!.url, sim);
  const before = await servedEverywhere(login);
  expect(before).toBeDefined();
  sim.resetCalls();

  const { port } = server;
  await server.kill();
  const down = await load(login, 30);
  expectAllStoreUnavailable(down.answers);
  expect(down.elapsedMs).toBeLessThan(BOUND_MS);

  server = await startRedisServer(DURABLE, { port, dir });
  let after: ApiAnswer[] | undefined;
  await waitUntil(async () => (after = await servedEverywhere(login)) !== undefined, 'recovery');
  // Same processes, same session, same tokens (kept in Redis' append-only file), no refresh needed.
  expect(after!.map((a) => a.body.pid)).toEqual(before!.map((a) => a.body.pid));
  expect(after!.map((a) => a.body.accessToken)).toEqual(before!.map((a) => a.body.accessToken));
  expect(sim.calls.refresh_token).toBe(0);
  for (const app of apps) expect((await entryAt(app.url)).status).toBe(303);
  expect(alive()).toEqual(Array(PROCESSES).fill(true));
});
