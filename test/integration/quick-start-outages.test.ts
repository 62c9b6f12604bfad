// The README's quick start, as is, against outages a studio meets: each leaves one line naming the
// cause on its console (no DEBUG, no logger given), and no line holds a password or a token. A
// Redis refusing connections at start, a Redis stalled (SIGSTOP) and restarted, a callback
// mounted away from redirectUri's path (named at start). On real redis-servers and the simulator over
// HTTP.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { freePort } from '../helpers/free-port';
import { startQuickStart, type RunningQuickStart } from '../helpers/quick-start';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { waitUntil } from '../helpers/wait-until';

const REDIS_PASSWORD = 'a-redis-password';
let sim: PlatformSimulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

/** The environment of the README's table, with the simulator's values. */
function environment(port: number, redisUrl: string): Record<string, string> {
  return {
    NODE_ENV: 'development',
    DEBUG: '',
    PORT: String(port),
    PLATFORM_AUTH_URL: sim.url,
    PLATFORM_ORIGINS: new URL(sim.url).origin,
    PLATFORM_CLIENT_ID: 'demo-game',
    PLATFORM_CLIENT_SECRET: 'demo-secret',
    REDIS_URL: redisUrl,
    SESSION_SECRET: randomBytes(32).toString('base64'),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
}

/** The lines of the quick start's output that match `pattern`. */
const linesOf = (game: RunningQuickStart, pattern: RegExp): string[] =>
  game
    .output()
    .split('\n')
    .filter((line) => pattern.test(line));

/** A player entering from the simulator's lobby: the callback's answer. */
async function enter(url: string, openId: string): Promise<Response> {
  const entered = await fetch(sim.enterUrl({ openId, redirectUri: `${url}/platform/callback` }), {
    redirect: 'manual',
  });
  return fetch(entered.headers.get('location')!, {
    redirect: 'manual',
    headers: { Referer: `${sim.url}/`, Accept: 'application/json' },
  });
}

test('Redis refusing connections at start: one line naming host:port and what to check, no password; then the game starts', async () => {
  const port = await freePort();
  const redisPort = await freePort();
  let server: Promise<TestRedisServer> | undefined;
  // Redis comes up once the quick start has said it is not there.
  const game = await startQuickStart(
    environment(port, `redis://:${REDIS_PASSWORD}@127.0.0.1:${redisPort}`),
    (output) => {
      if (server === undefined && /unreachable/.test(output)) {
        server = startRedisServer(['--requirepass', REDIS_PASSWORD], { port: redisPort });
      }
    },
  );
  try {
    expect(linesOf(game, /unreachable/)).toEqual([
      expect.stringContaining(
        `Redis at redis://127.0.0.1:${redisPort} is unreachable (ECONNREFUSED): nothing listens there: is redis-server running?`,
      ),
    ]);
    expect(game.output()).not.toContain(REDIS_PASSWORD);
  } finally {
    await game.close();
    await (await server)?.stop();
  }
}, 60_000);

test('redirectUri at another path than the one the callback is mounted at: one line at start naming both', async () => {
  const server = await startRedisServer();
  const port = await freePort();
  const game = await startQuickStart({
    ...environment(port, server.url),
    PLATFORM_REDIRECT_URI: `http://localhost:${port}/elsewhere/callback`,
  });
  try {
    // Said on the turn after checkSetup(), on stderr: it may arrive after "Game on" (stdout).
    await waitUntil(() => /login\.callback is mounted/.test(game.output()), 'the mount line');
    expect(linesOf(game, /\[express-platform-login\]/)).toEqual([
      expect.stringContaining(
        "login.callback is mounted at /platform/callback, but redirectUri's path is /elsewhere/callback",
      ),
    ]);
    expect((await fetch(`${game.url}/elsewhere/callback?code=x`)).status).toBe(404);
    expect(linesOf(game, /\[express-platform-login\]/)).toHaveLength(1);
  } finally {
    await game.close();
    await server.stop();
  }
}, 60_000);

describe('on a running quick start', () => {
  let server: TestRedisServer;
  let game: RunningQuickStart;
  beforeAll(async () => {
    server = await startRedisServer(['--requirepass', REDIS_PASSWORD]);
    game = await startQuickStart(
      environment(await freePort(), `redis://:${REDIS_PASSWORD}@127.0.0.1:${server.port}`),
    );
  }, 60_000);
  afterAll(async () => {
    await game?.close();
    await server?.stop();
  });

  test('nothing said at start', () => {
    expect(game.output().split('\n').slice(0, -2)).toEqual([]);
  });

  test('a Redis stall: the entries during it answer 503 store_unavailable, one line names the cause', async () => {
    const probe = new Redis(server.port, { password: REDIS_PASSWORD });
    try {
      // Connected first, and the entries sent only once Redis is frozen. Frozen until both have
      // answered (however long a loaded machine takes over them), not for a fixed time.
      await probe.ping();
      server.pause();
      const answers = [];
      try {
        await waitUntil(async () => !(await answersWithin(probe, 200)), 'Redis frozen');
        for (const openId of ['player-ada', 'player-bo']) {
          const answer = await enter(game.url, openId);
          answers.push([answer.status, await answer.text()]);
        }
      } finally {
        server.resume();
      }
      expect(answers).toEqual([
        [503, '{"error":"store_unavailable"}'],
        [503, '{"error":"store_unavailable"}'],
      ]);
      expect(linesOf(game, /\[express-platform-login\]/)).toEqual([
        expect.stringMatching(
          /answered 503 \(ERR_PLATFORM_STORE_UNAVAILABLE\): The token store did not answer/,
        ),
      ]);
    } finally {
      probe.disconnect();
    }
  }, 30_000);

  test('Redis restarted (a failover as a plain client sees it): one line naming where and what to check; players enter again after', async () => {
    const before = linesOf(game, /\[express-platform-login\]/).length;
    await server.stop();
    await waitUntil(
      () => /dropped|unreachable/.test(game.output().split('\n').slice(-40).join('\n')),
      'the line about Redis',
    );
    server = await startRedisServer(['--requirepass', REDIS_PASSWORD], { port: server.port });
    // A player entering before the client is back gets a 503, which is logged as such (once per 10 s).
    await waitUntil(
      async () => (await enter(game.url, 'player-cy')).status === 303,
      'an entry once Redis is back',
    );
    const after = linesOf(game, /\[express-platform-login\]/).slice(before);
    expect(
      after.filter((line) => !/answered 503 \(ERR_PLATFORM_STORE_UNAVAILABLE\)/.test(line)),
    ).toEqual([
      // A clean close, or a reset or broken pipe (a command of the client's in flight as Redis
      // went down): which one is the kernel's timing, and the line gives each the same hint.
      expect.stringMatching(
        new RegExp(
          `Redis at redis://127\\.0\\.0\\.1:${server.port} is unreachable \\((SocketClosedUnexpectedlyError|ECONNRESET|EPIPE)\\): ` +
            `the connection was dropped: did Redis at REDIS_URL=redis://127\\.0\\.0\\.1:${server.port} restart or fail over`,
        ),
      ),
    ]);
    expect(after.join('\n')).toContain(
      'or does it want TLS (rediss://)? The client keeps reconnecting',
    );
    expect(game.output()).not.toContain(REDIS_PASSWORD);
  }, 60_000);
});

/** Whether `redis` answers a PING within `ms` (a PING left unanswered is answered later, unread). */
async function answersWithin(redis: Redis, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([redis.ping().then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
