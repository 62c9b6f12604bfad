// The example game backend's contract (docs/example-app.md) over real HTTP:
// embedded defaults, two instances sharing one Redis and a stalled Redis on each REDIS_CLIENT
// (node-redis, ioredis; sessions on RedisSessionStore), TRUST_PROXY, and graceful shutdown
// of `example-app/server.ts`.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Agent, get, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { MemoryTokenStore, RedisTokenStore, type TokenRecord } from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { readConfig } from '../../example-app/config';
import { startExample as startWithLogs, type RunningExample } from '../../example-app/start';
import { QUIET } from '../helpers/test-app';
import { Browser, fromLobby } from '../helpers/cookie-browser';

/** The example as its tests start it: the refusals they cause on purpose are not printed. */
const startExample = (config: Parameters<typeof startWithLogs>[0]) =>
  startWithLogs(config, { logger: QUIET });
import { freePort } from '../helpers/free-port';
import { expiringIn, rewriteRecord, storedRecord } from '../helpers/records';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { quietWindow } from '../helpers/command-counts';
import { valueOnce } from '../helpers/wait-until';
import { spawnOnSources } from '../helpers/on-sources';
import { startDropper } from '../helpers/tcp-proxy';
import { ADA } from '../helpers/example-player';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';

const ROOT = join(__dirname, '../..');
const JSON_ACCEPT = { Accept: 'application/json' };

const unescapeHtml = (text: string): string =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) =>
    name === 'amp' ? '&' : name === 'lt' ? '<' : name === 'gt' ? '>' : name === 'quot' ? '"' : "'",
  );

/** The lobby's "Enter game" for the first player: the URL its form submits to. */
function enterLinkOf(lobbyHtml: string, lobbyUrl: string): string {
  const form = /<form method="get" action="([^"]+)">(.*?)<\/form>/.exec(lobbyHtml);
  if (!form) throw new Error('the lobby shows no Enter game form');
  const target = new URL(unescapeHtml(form[1]!), lobbyUrl);
  for (const input of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    target.searchParams.set(input[1]!, unescapeHtml(input[2]!));
  }
  return target.href;
}

/**
 * Enters as `openId` from the platform (its /enter), landing on the game page of `example`. The
 * platform sends the browser to the configured redirect_uri; its path goes to `example`, as a load
 * balancer in front of several instances would send it.
 */
async function enterFrom(
  sim: PlatformSimulator,
  example: RunningExample,
  browser: Browser,
  openId = 'player-ada',
): Promise<void> {
  const { redirectUri } = example;
  const entry = await browser.fetch(sim.enterUrl({ openId, redirectUri }));
  expect(entry.status).toBe(302);
  const callback = new URL(entry.headers.get('location')!);
  expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);
  const landing = await browser.fetch(
    new URL(callback.pathname + callback.search, example.url).href,
    { headers: fromLobby(sim) },
  );
  expect(landing.status).toBe(303);
  expect(landing.headers.get('location')).toBe('/');
}

async function json(res: Response): Promise<unknown> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json();
}

async function waitUntil(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const healthy = (example: RunningExample) => async () =>
  (await fetch(new URL('/healthz', example.url))).status === 200;

describe('with no environment: embedded simulator, memory stores', () => {
  let example: RunningExample;
  let sim: PlatformSimulator;
  const url = (path: string): string => new URL(path, example.url).href;

  beforeAll(async () => {
    example = await startExample(readConfig({ PORT: '0' }));
    sim = example.simulator!;
  });
  afterAll(() => example.close());

  test('starts the simulator in-process and keeps sessions and tokens in memory', async () => {
    expect(sim).toBeDefined();
    expect(example.redis).toBeUndefined();
    expect(example.login.store).toBeInstanceOf(MemoryTokenStore);
    const res = await fetch(url('/healthz'));
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ status: 'ok' });
  });

  test("logged out, / links to the simulator's lobby", async () => {
    const res = await fetch(url('/'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const href = /<a [^>]*id="enter" href="([^"]+)"/.exec(await res.text())?.[1];
    expect(href).toBeDefined();
    const lobby = new URL(unescapeHtml(href!));
    expect(lobby.origin).toBe(sim.url);
    expect(lobby.searchParams.get('redirect_uri')).toBe(url('/platform/callback'));
  });

  test("the lobby's Enter game lands logged in; /api/me, /api/profile, then logout", async () => {
    const browser = new Browser();
    const page = await browser.fetch(url('/'));
    const lobbyUrl = unescapeHtml(/id="enter" href="([^"]+)"/.exec(await page.text())![1]!);
    const lobby = await browser.fetch(lobbyUrl);
    expect(lobby.status).toBe(200);

    const entry = await browser.fetch(enterLinkOf(await lobby.text(), lobbyUrl));
    expect(entry.status).toBe(302);
    const callback = entry.headers.get('location')!;
    expect(callback).toMatch(new RegExp(`^${url('/platform/callback')}\\?code=[^&]+$`));
    const landing = await browser.fetch(callback, { headers: fromLobby(sim) });
    expect(landing.status).toBe(303);
    expect(landing.headers.get('location')).toBe('/');

    const game = await browser.fetch(url('/'));
    expect(game.status).toBe(200);
    expect(game.headers.get('cache-control')).toBe('no-store');
    const html = await game.text();
    expect(html).toContain('<span id="open-id">player-ada</span>');
    expect(html).toContain('id="logout"');

    const me = await browser.fetch(url('/api/me'), { headers: JSON_ACCEPT });
    expect(me.status).toBe(200);
    expect(await json(me)).toStrictEqual(ADA);
    // A player's answers are never kept by a cache between the game and the browser.
    expect(me.headers.get('cache-control')).toBe('no-store');

    // What the open API says when asked directly with the player's token.
    const record = (await storedRecord(example.login.store, browser.sessionId())) as TokenRecord;
    const direct = await fetch(`${sim.url}/userinfo`, {
      headers: { Authorization: `Bearer ${record.accessToken}` },
    });
    const userinfo = await direct.json();
    expect(userinfo).toEqual({ open_id: 'player-ada', unionid: 'union-ada', nickname: 'Ada' });
    sim.resetCalls();
    const profile = await browser.fetch(url('/api/profile'), { headers: JSON_ACCEPT });
    expect(profile.status).toBe(200);
    expect(await json(profile)).toStrictEqual(userinfo);
    expect(profile.headers.get('cache-control')).toBe('no-store');
    expect(sim.calls.userinfo).toBe(1);
    expect(html).not.toContain(record.accessToken);
    expect(html).not.toContain(record.refreshToken);

    const sessionId = browser.sessionId();
    const logout = await browser.fetch(url('/logout'), { method: 'POST', headers: JSON_ACCEPT });
    expect(logout.status).toBe(204);
    expect(browser.cookies.has('connect.sid')).toBe(false);
    expect(await storedRecord(example.login.store, sessionId)).toBeUndefined();
    const after = await browser.fetch(url('/api/me'), { headers: JSON_ACCEPT });
    expect(after.status).toBe(401);
    expect(await json(after)).toStrictEqual({ error: 'login_required' });
  });

  test('every error is a JSON body with an error string for Accept: application/json', async () => {
    const used = sim.issueCode({ redirectUri: url('/platform/callback') });
    await fetch(url(`/platform/callback?code=${used}`), {
      headers: fromLobby(sim),
      redirect: 'manual',
    });
    // Entries as a browser sends them from the platform's lobby (the entry context passes).
    const fromPlatform = { headers: fromLobby(sim) };
    const cases: [string, RequestInit, number, string][] = [
      ['/api/me', {}, 401, 'login_required'],
      ['/api/profile', {}, 401, 'login_required'],
      ['/no-such-page', {}, 404, 'not_found'],
      ['/platform/callback', fromPlatform, 400, 'invalid_request'],
      ['/platform/callback?code=a&code=b', fromPlatform, 400, 'invalid_request'],
      ['/platform/callback?code=never-issued', fromPlatform, 400, 'code_rejected'],
      [`/platform/callback?code=${used}`, fromPlatform, 400, 'code_already_used'],
      // PLATFORM_ORIGINS defaults to the embedded simulator's: an entry from elsewhere is refused.
      ['/platform/callback?code=never-issued-2', {}, 403, 'entry_context_refused'],
      ['/platform/callback?error=access_denied', fromPlatform, 403, 'access_denied'],
      ['/platform/callback?code=x', { method: 'POST' }, 405, 'method_not_allowed'],
    ];
    const answers = await Promise.all(
      cases.map(async ([path, init]) => {
        const headers = { ...(init.headers as Record<string, string>), ...JSON_ACCEPT };
        const res = await fetch(url(path), { ...init, headers, redirect: 'manual' });
        return [path, res.status, await json(res)];
      }),
    );
    expect(answers).toEqual(cases.map(([path, , status, error]) => [path, status, { error }]));
  });
});

/** The two Redis clients the example runs on (REDIS_CLIENT). */
const REDIS_CLIENTS = ['redis', 'ioredis'] as const;

describe.each(REDIS_CLIENTS)(
  'with REDIS_URL and TOKEN_ENCRYPTION_KEY, REDIS_CLIENT=%s: two instances are one service',
  (redisClient) => {
    let sim: PlatformSimulator;
    let a: RunningExample;
    let b: RunningExample;
    let redis: Redis;

    beforeAll(async () => {
      sim = await startSimulator();
      const env = {
        PORT: '0',
        PLATFORM_AUTH_URL: sim.url,
        // Both behind one public address, as a deployment behind a load balancer (never contacted here).
        PLATFORM_REDIRECT_URI: 'http://localhost:3999/platform/callback',
        REDIS_URL: process.env.REDIS_URL!,
        SESSION_SECRET: randomBytes(24).toString('base64url'),
        TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        REDIS_CLIENT: redisClient,
      };
      [a, b] = await Promise.all([startExample(readConfig(env)), startExample(readConfig(env))]);
      redis = new Redis(process.env.REDIS_URL!);
      await waitUntil(
        async () => (await healthy(a)()) && (await healthy(b)()),
        'Redis to be ready',
      );
    });
    afterAll(async () => {
      await Promise.all([a?.close(), b?.close()]);
      await sim.close();
      redis?.disconnect();
    });

    test('log in on one, use and refresh on the other, log out on the other ends it on the first', async () => {
      expect(a.simulator).toBeUndefined();
      expect(a.redis?.kind).toBe(redisClient);
      expect(a.login.store).toBeInstanceOf(RedisTokenStore);
      const browser = new Browser();
      await enterFrom(sim, a, browser);

      const onB = await browser.fetch(new URL('/api/me', b.url).href, { headers: JSON_ACCEPT });
      expect(onB.status).toBe(200);
      expect(await json(onB)).toStrictEqual(ADA);

      // The token is due: B refreshes it, and A then uses B's refreshed record without a refresh.
      await rewriteRecord(a.login.store, browser.sessionId(), expiringIn(-1000));
      sim.advanceClock(3 * 3600);
      sim.resetCalls();
      const refreshedOnB = await browser.fetch(new URL('/api/profile', b.url).href, {
        headers: JSON_ACCEPT,
      });
      expect(refreshedOnB.status).toBe(200);
      const onA = await browser.fetch(new URL('/api/profile', a.url).href, {
        headers: JSON_ACCEPT,
      });
      expect(onA.status).toBe(200);
      expect(sim.calls.refresh_token).toBe(1);
      expect(sim.calls.userinfo).toBe(2);

      // The old cookie, sent again after the logout, as a second tab or a replaying client would.
      const cookie = `connect.sid=${browser.cookies.get('connect.sid')}`;
      const logout = await browser.fetch(new URL('/logout', b.url).href, { method: 'POST' });
      expect(logout.status).toBe(204);
      const afterLogout = await fetch(new URL('/api/me', a.url), {
        headers: { ...JSON_ACCEPT, Cookie: cookie },
      });
      expect(afterLogout.status).toBe(401);
      expect(await json(afterLogout)).toStrictEqual({ error: 'login_required' });
    });

    test('Redis holds no token in plaintext, in the token records or in the sessions', async () => {
      const browser = new Browser();
      await enterFrom(sim, a, browser, 'player-bo');
      const record = (await storedRecord(a.login.store, browser.sessionId())) as TokenRecord;
      expect(record.openId).toBe('player-bo');

      const keys: string[] = [];
      for await (const batch of redis.scanStream({ count: 1000 }))
        keys.push(...(batch as string[]));
      expect(keys.some((key) => key.startsWith('example:tokens:'))).toBe(true);
      expect(keys).toContain(`example:sess:${browser.sessionId()}`);
      const values = await Promise.all(
        keys.map((key) => redis.getBuffer(key).catch(() => Buffer.alloc(0))), // other types: not ours
      );
      const everything = Buffer.concat(values.map((value) => value ?? Buffer.alloc(0)));
      expect(everything.includes(record.accessToken)).toBe(false);
      expect(everything.includes(record.refreshToken)).toBe(false);
    });
  },
);

/** `call`'s answer and how long it took, in milliseconds. */
async function timed<T>(call: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const answer = await call();
  return [answer, Date.now() - started];
}

// Each client's example on a Redis of its own: every step runs on both at once, the steps one after
// another (a concurrent test runs no *Each hook).
describe('a Redis of its own on each REDIS_CLIENT: memory, then a stall', () => {
  const beds = new Map<string, { server: TestRedisServer; example: RunningExample }>();
  const servers: TestRedisServer[] = [];

  /** A player entered on `redisClient`'s example: its bed, browser and `/api/me` URL. */
  async function loggedInOn(redisClient: string) {
    const { server, example } = beds.get(redisClient)!;
    const browser = new Browser();
    await enterFrom(example.simulator!, example, browser);
    return { server, example, browser, me: new URL('/api/me', example.url).href };
  }

  beforeAll(async () => {
    await Promise.all(
      REDIS_CLIENTS.map(async (redisClient) => {
        const server = await startRedisServer();
        servers.push(server);
        const example = await startExample(
          readConfig({ PORT: '0', REDIS_URL: server.url, REDIS_CLIENT: redisClient }),
        );
        beds.set(redisClient, { server, example });
        await waitUntil(healthy(example), 'Redis to be ready');
      }),
    );
  });
  afterAll(async () => {
    for (const server of servers) server.resume();
    await Promise.all([...beds.values()].map(({ example }) => example.close()));
    await Promise.all(servers.map((server) => server.stop()));
  });

  describe('memory', () => {
    test.concurrent.each(REDIS_CLIENTS)(
      'REDIS_CLIENT=%s: a logged-in request with a fresh token sends Redis no command: the session and the record come from memory',
      async (redisClient) => {
        const { server, browser, me } = await loggedInOn(redisClient);
        expect((await browser.fetch(me, { headers: JSON_ACCEPT })).status).toBe(200); // now in memory
        const raw = new Redis(server.url);
        try {
          // One window of 10 requests in ten with no command.
          const sent = await quietWindow(raw, 10, async () => {
            for (let i = 0; i < 10; i += 1) {
              expect((await browser.fetch(me, { headers: JSON_ACCEPT })).status).toBe(200);
            }
          });
          expect(sent).toStrictEqual([]);
        } finally {
          raw.disconnect();
        }
      },
    );
  });

  describe('a stall', () => {
    test.concurrent.each(REDIS_CLIENTS)(
      'REDIS_CLIENT=%s: answers 503 store_unavailable within 2.5 s once memory may no longer serve, and the same cookie works again after',
      async (redisClient) => {
        const { server, browser, me } = await loggedInOn(redisClient);
        expect((await browser.fetch(me, { headers: JSON_ACCEPT })).status).toBe(200);

        server.pause();
        // Within the invalidation channel's lease (250 ms after its last answered heartbeat) the
        // session and the record may still come from memory; past it every request reads Redis.
        const [first, firstMs] = await timed(() => browser.fetch(me, { headers: JSON_ACCEPT }));
        expect([200, 503]).toContain(first.status);
        expect(firstMs).toBeLessThan(2500 + LOAD_ALLOWANCE_MS);
        await new Promise((resolve) => setTimeout(resolve, 500));
        const [stalled, tookMs] = await timed(() => browser.fetch(me, { headers: JSON_ACCEPT }));
        expect(stalled.status).toBe(503);
        expect(await json(stalled)).toStrictEqual({ error: 'store_unavailable' });
        expect(tookMs).toBeLessThan(2500 + LOAD_ALLOWANCE_MS);

        server.resume();
        const recovered = await browser.fetch(me, { headers: JSON_ACCEPT });
        expect(recovered.status).toBe(200);
        expect(await json(recovered)).toStrictEqual(ADA);
      },
    );
  });

  describe('readiness while stalled', () => {
    test.concurrent.each(REDIS_CLIENTS)(
      'REDIS_CLIENT=%s: /readyz says 503 with the reason while Redis is stalled, 200 after; /healthz stays a liveness check',
      async (redisClient) => {
        const { server, example } = beds.get(redisClient)!;
        const readyz = new URL('/readyz', example.url).href;
        const ready = await fetch(readyz);
        expect(ready.status).toBe(200);
        // True only now: never kept by a cache on the way.
        expect(ready.headers.get('cache-control')).toBe('no-store');
        server.pause();
        const started = Date.now();
        const stalled = await fetch(readyz);
        expect(Date.now() - started).toBeLessThan(2500 + LOAD_ALLOWANCE_MS);
        expect(stalled.status).toBe(503);
        expect(stalled.headers.get('cache-control')).toBe('no-store');
        expect(await json(stalled)).toMatchObject({
          error: 'store_unavailable',
          ready: false,
          store: { ok: false, error: 'ERR_PLATFORM_STORE_UNAVAILABLE' },
        });
        server.resume();
        const recovered = await valueOnce(
          async () => (await fetch(readyz)).status,
          (status) => status === 200,
        );
        expect(recovered).toBe(200);
      },
    );
  });
});

/** What console.warn was called with, per scenario: the starts below run side by side. */
const warnings = new AsyncLocalStorage<string[]>();

// Each start (and the stop) is an example on a Redis (or a dropper) of its own, waiting on Redis, on
// reconnection delays or on a slow platform: they run side by side (a concurrent test runs no *Each
// hook).
describe('starting, and stopping on SIGTERM', () => {
  let warn: jest.SpyInstance;
  /** The platform of the spawned example stopped on SIGTERM. */
  let sim: PlatformSimulator;
  beforeAll(async () => {
    sim = await startSimulator();
    warn = jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      warnings.getStore()?.push(args.map(String).join(' '));
    });
  });
  afterAll(async () => {
    warn.mockRestore();
    await sim.close();
  });

  test.concurrent.each(REDIS_CLIENTS)(
    'REDIS_CLIENT=%s: started while its Redis is frozen, it is started only once Redis answers: then ready at once, and the first entry lands',
    async (redisClient) => {
      const warned: string[] = [];
      const server = await startRedisServer();
      server.pause();
      let started = false;
      const starting = warnings
        .run(warned, () =>
          startExample(readConfig({ PORT: '0', REDIS_URL: server.url, REDIS_CLIENT: redisClient })),
        )
        .then((running) => {
          started = true;
          return running;
        });
      try {
        await new Promise((resolve) => setTimeout(resolve, 700));
        expect(started).toBe(false);
        server.resume();
        const example = await starting;
        expect((await fetch(new URL('/healthz', example.url))).status).toBe(200);
        await warnings.run(warned, () => enterFrom(example.simulator!, example, new Browser()));
        expect(warned).toEqual([]);
      } finally {
        server.resume();
        await (await starting.catch(() => undefined))?.close();
        await server.stop();
      }
    },
  );

  test.concurrent.each(REDIS_CLIENTS)(
    'REDIS_CLIENT=%s: with no Redis answering it still starts, says so, answers /healthz 503, and once closed nothing of it reconnects',
    async (redisClient) => {
      // a Redis that never answers.
      const dropper = await startDropper();
      const { port } = dropper;
      const warned: string[] = [];
      try {
        const example = await warnings.run(warned, () =>
          startExample(
            readConfig({
              PORT: '0',
              REDIS_URL: `redis://127.0.0.1:${port}`,
              REDIS_CLIENT: redisClient,
            }),
          ),
        );
        try {
          expect(warned).toContainEqual(expect.stringContaining('Redis is not answering yet'));
          expect((await fetch(new URL('/healthz', example.url))).status).toBe(503);
        } finally {
          await example.close();
        }
        expect(dropper.connections()).toBeGreaterThan(0);
        expect(await dropper.silentWindowComes()).toBe(true);
      } finally {
        dropper.close();
      }
    },
  );

  test.concurrent(
    '`node example-app/server.ts` on SIGTERM: stops accepting, finishes the request in flight, and exits 0 without waiting for idle keep-alive',
    async () => {
      const port = await freePort();
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PORT: String(port),
        PLATFORM_AUTH_URL: sim.url,
      };
      delete env.NODE_OPTIONS;
      delete env.REDIS_URL;
      // Sources, not dist/: the package's names resolve to lib/ (see the helper).
      const child = spawnOnSources('example-app/server.ts', { cwd: ROOT, env });
      const exited = once(child, 'exit');
      const agent = new Agent({ keepAlive: true });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      try {
        await waitUntil(() => {
          if (child.exitCode !== null) throw new Error(`the example exited at start:\n${output}`);
          return output.includes('Example game backend:');
        }, 'the example to start');
        const base = `http://localhost:${port}`;
        const code = sim.issueCode({ redirectUri: `${base}/platform/callback` });
        // Time for the example to see SIGTERM while the request waits, on a loaded machine, and
        // still within the token client's 5 s deadline for the answer.
        sim.injectFault({ kind: 'latency', ms: 3000 }, { grant: 'authorization_code', times: 1 });
        let answeredAt = 0;
        // A client that never closes an idle connection itself: an example waiting for it would
        // wait out the server's own keep-alive timeout (5 s, and Node's 1 s on top).
        const inFlight = new Promise<IncomingMessage>((resolve, reject) => {
          get(`${base}/platform/callback?code=${code}`, { agent }, (res) => {
            answeredAt = Date.now();
            res.resume();
            resolve(res);
          }).on('error', reject);
        });
        await waitUntil(() => sim.calls.authorization_code === 1, 'the code exchange to start');

        child.kill('SIGTERM');
        await waitUntil(() => output.includes('SIGTERM:'), 'the example to see SIGTERM');
        const sawSigtermAt = Date.now();
        await expect(fetch(`${base}/healthz`)).rejects.toThrow();

        const landed = await inFlight;
        expect(answeredAt).toBeGreaterThan(sawSigtermAt); // it really was in flight
        expect(landed.statusCode).toBe(303);
        expect(landed.headers.location).toBe('/');
        expect(landed.headers['set-cookie']?.some((c) => c.startsWith('connect.sid='))).toBe(true);
        expect(await exited).toEqual([0, null]);
        // The example closes the kept-alive connection once the answer is out (within about 1 s),
        // not at the idle timeout (6 s): below 5 s leaves room for a loaded machine.
        expect(Date.now() - answeredAt).toBeLessThan(5000);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        agent.destroy();
        sim.clearFaults();
      }
    },
  );
});

describe('/metrics', () => {
  test('lists the package families before the first request (counters at 0), `…_seconds` histograms after an entry, the service named, no secrets', async () => {
    const example = await startExample(readConfig({ PORT: '0' }));
    try {
      // Before the first request: the service is named and every counter family is there at 0,
      // so `rate(…)` and alerts have series from the start.
      const before = await fetch(new URL('/metrics', example.url));
      expect(before.status).toBe(200);
      expect(before.headers.get('content-type')).toMatch(/text\/plain/);
      const empty = await before.text();
      expect(empty).toMatch(/^target_info\{[^}]*service_name="example-game-backend"/m);
      expect(empty).not.toContain('unknown_service');
      for (const family of [
        'epl_logins_total',
        'epl_refresh_failures_total',
        'epl_store_errors_total',
      ]) {
        expect(empty).toContain(`# TYPE ${family} counter`);
      }
      expect(empty).toMatch(/^epl_logins_total(\{[^}]*\})? 0$/m);
      expect(empty).toMatch(
        /^epl_token_endpoint_calls_total\{[^}]*grant="authorization_code"[^}]*outcome="ok"[^}]*\} 0$/m,
      );

      const browser = new Browser();
      await enterFrom(example.simulator!, example, browser);
      const res = await fetch(new URL('/metrics', example.url));
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toMatch(/^epl_logins_total(\{[^}]*\})? 1$/m);
      expect(text).toMatch(
        /^epl_token_endpoint_calls_total\{[^}]*grant="authorization_code"[^}]*outcome="ok"[^}]*\} 1$/m,
      );
      // Durations in seconds, with buckets fitted to each: sub-millisecond for the store, up to
      // the client's 5 s timeout for the token endpoint.
      expect(text).toContain('# UNIT epl_store_duration_seconds s');
      expect(text).toMatch(
        /^epl_store_duration_seconds_bucket\{[^}]*operation="put"[^}]*le="0\.0001"\} \d+$/m,
      );
      expect(text).toMatch(
        /^epl_token_endpoint_duration_seconds_bucket\{[^}]*grant="authorization_code"[^}]*le="5"\} 1$/m,
      );
      expect(text).not.toMatch(/le="10000"/);
      expect(text).not.toContain('demo-secret');
    } finally {
      await example.close();
    }
  });
});

describe('PLATFORM_ORIGINS and ENTRY_FAILURE_LIMIT', () => {
  let sim: PlatformSimulator;
  beforeAll(async () => {
    sim = await startSimulator();
  });
  afterAll(() => sim.close());

  const entry = (example: RunningExample, code: string, headers: Record<string, string>) =>
    fetch(new URL(`/platform/callback?code=${encodeURIComponent(code)}`, example.url), {
      headers: { ...headers, ...JSON_ACCEPT },
      redirect: 'manual',
    });

  test('are read as documented, and a wrong ENTRY_FAILURE_LIMIT is refused naming the variable', () => {
    expect(readConfig({}).platformOrigins).toBeUndefined();
    expect(readConfig({}).entryFailureLimit).toBe(20);
    const config = readConfig({
      PLATFORM_ORIGINS: ' https://a.example, https://b.example:8443 ,',
      ENTRY_FAILURE_LIMIT: '0',
    });
    expect(config.platformOrigins).toEqual(['https://a.example', 'https://b.example:8443']);
    expect(config.entryFailureLimit).toBe(0);
    for (const bad of ['x', '-1', '2.5']) {
      expect(() => readConfig({ ENTRY_FAILURE_LIMIT: bad })).toThrow(/ENTRY_FAILURE_LIMIT/);
    }
  });

  test('with PLATFORM_AUTH_URL, PLATFORM_ORIGINS turns enforcing on: an entry from elsewhere is refused, the code kept', async () => {
    const example = await startExample(
      readConfig({
        PORT: '0',
        PLATFORM_AUTH_URL: sim.url,
        PLATFORM_ORIGINS: 'https://platform.example',
      }),
    );
    try {
      sim.resetCalls();
      const code = sim.issueCode({ redirectUri: example.redirectUri });
      const foreign = await entry(example, code, fromLobby(sim));
      expect(foreign.status).toBe(403);
      expect(await foreign.json()).toEqual({ error: 'entry_context_refused' });
      expect(sim.calls.authorization_code).toBe(0);
      const genuine = await entry(example, code, {
        ...fromLobby(sim),
        Referer: 'https://platform.example/lobby',
      });
      expect(genuine.status).toBe(303);
    } finally {
      await example.close();
    }
  });

  test("only the platform's pages may frame the game: PLATFORM_ORIGINS, the embedded simulator's, or none named (no policy)", async () => {
    const headersOf = async (env: Record<string, string>) => {
      const example = await startExample(readConfig({ PORT: '0', ...env }));
      try {
        const page = await fetch(example.url);
        return {
          csp: page.headers.get('content-security-policy'),
          nosniff: page.headers.get('x-content-type-options'),
        };
      } finally {
        await example.close();
      }
    };
    const named = await headersOf({
      PLATFORM_AUTH_URL: sim.url,
      PLATFORM_ORIGINS: 'https://platform.example',
    });
    expect(named).toEqual({ csp: 'frame-ancestors https://platform.example', nosniff: 'nosniff' });
    const embedded = await headersOf({});
    expect(embedded.csp).toMatch(/^frame-ancestors http:\/\/127\.0\.0\.1:\d+$/);
    // Report-only entries (no origins named): the game's framing is left to the studio.
    expect(await headersOf({ PLATFORM_AUTH_URL: sim.url })).toEqual({
      csp: null,
      nosniff: 'nosniff',
    });
  });

  test('ENTRY_FAILURE_LIMIT=2: the third made-up code from one address is 429 with Retry-After, never sent', async () => {
    const example = await startExample(readConfig({ PORT: '0', ENTRY_FAILURE_LIMIT: '2' }));
    try {
      const embedded = example.simulator!;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) {
        const res = await entry(
          example,
          `made-up-${i}-${randomBytes(6).toString('hex')}`,
          fromLobby(embedded),
        );
        statuses.push(res.status);
        if (res.status === 429) {
          expect(await res.json()).toEqual({ error: 'too_many_entries' });
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        }
      }
      expect(statuses).toEqual([400, 400, 429, 429]);
      expect(embedded.calls.authorization_code).toBe(2);
    } finally {
      await example.close();
    }
  });
});

describe('REDIS_CLIENT and TRUST_PROXY', () => {
  test('are read as documented; a value Express or the example cannot use is refused naming the variable', () => {
    expect(readConfig({}).redisClient).toBe('redis');
    expect(readConfig({ REDIS_CLIENT: 'ioredis' }).redisClient).toBe('ioredis');
    expect(readConfig({ REDIS_CLIENT: '' }).redisClient).toBe('redis');
    for (const bad of ['node-redis', 'Redis', 'ioredis6']) {
      expect(() => readConfig({ REDIS_CLIENT: bad })).toThrow(/^REDIS_CLIENT must be/);
    }

    expect(readConfig({}).trustProxy).toBeUndefined();
    expect(readConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(readConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(readConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe(
      'loopback, 10.0.0.0/8',
    );
    for (const bad of ['not-an-address', '10.0.0.0/99']) {
      expect(() => readConfig({ TRUST_PROXY: bad })).toThrow(/^TRUST_PROXY must be/);
    }
  });

  /** Made-up codes from the lobby, as sent through a proxy that names the client in X-Forwarded-For. */
  async function failedEntries(example: RunningExample, clients: string[]): Promise<number[]> {
    const statuses: number[] = [];
    for (const client of clients) {
      const code = `made-up-${randomBytes(6).toString('hex')}`;
      const res = await fetch(new URL(`/platform/callback?code=${code}`, example.url), {
        headers: { ...fromLobby(example.simulator!), ...JSON_ACCEPT, 'X-Forwarded-For': client },
        redirect: 'manual',
      });
      statuses.push(res.status);
    }
    return statuses;
  }

  // Two players behind a proxy on this machine: 203.0.113.7 fails twice, then 198.51.100.9 tries.
  const CLIENTS = ['203.0.113.7', '203.0.113.7', '198.51.100.9', '203.0.113.7'];

  test('TRUST_PROXY=loopback: failed entries count per address from X-Forwarded-For', async () => {
    const example = await startExample(
      readConfig({ PORT: '0', ENTRY_FAILURE_LIMIT: '2', TRUST_PROXY: 'loopback' }),
    );
    try {
      expect(await failedEntries(example, CLIENTS)).toEqual([400, 400, 400, 429]);
    } finally {
      await example.close();
    }
  });

  test('without TRUST_PROXY: X-Forwarded-For is not believed, every entry counts for the proxy', async () => {
    const example = await startExample(readConfig({ PORT: '0', ENTRY_FAILURE_LIMIT: '2' }));
    try {
      expect(await failedEntries(example, CLIENTS)).toEqual([400, 400, 429, 429]);
    } finally {
      await example.close();
    }
  });
});

describe('NODE_ENV=production: the session cookie', () => {
  /** An entry from the lobby, as a proxy that ended TLS passes it on (X-Forwarded-Proto: https). */
  async function entryCookie(env: Record<string, string>): Promise<string | undefined> {
    const example = await startExample(readConfig({ PORT: '0', ...env }));
    try {
      const sim = example.simulator!;
      const code = sim.issueCode({ redirectUri: example.redirectUri });
      const res = await fetch(new URL(`/platform/callback?code=${code}`, example.url), {
        headers: { ...fromLobby(sim), 'X-Forwarded-Proto': 'https' },
        redirect: 'manual',
      });
      expect(res.status).toBe(303);
      return res.headers.getSetCookie().find((line) => line.startsWith('connect.sid='));
    } finally {
      await example.close();
    }
  }

  test('is Secure and SameSite=Lax behind a proxy that ends TLS (TRUST_PROXY)', async () => {
    const cookie = await entryCookie({ NODE_ENV: 'production', TRUST_PROXY: 'loopback' });
    expect(cookie).toMatch(/; HttpOnly; Secure; SameSite=Lax$/);
  });

  test('outside production it is not Secure, so the example works over local http', async () => {
    const cookie = await entryCookie({});
    expect(cookie).toMatch(/; HttpOnly; SameSite=Lax$/);
  });
});

describe('the secrets, refused at start naming the variable', () => {
  const strongSecret = randomBytes(32).toString('base64');
  const refusal = (env: Record<string, string>) =>
    startExample(readConfig({ PORT: '0', ...env })).then(
      async (running) => {
        await running.close();
        return 'started';
      },
      (error: Error) => error.message,
    );

  test('a patterned TOKEN_ENCRYPTION_KEY, whatever NODE_ENV says', async () => {
    const patterned = Buffer.alloc(32, 7).toString('base64');
    expect(await refusal({ TOKEN_ENCRYPTION_KEY: patterned })).toMatch(
      /^TOKEN_ENCRYPTION_KEY must be base64 of 32 random bytes.*openssl rand -base64 32/,
    );
  });

  test('NODE_ENV=production with Redis and no TOKEN_ENCRYPTION_KEY', async () => {
    const env = { NODE_ENV: 'production', SESSION_SECRET: strongSecret };
    expect(await refusal({ ...env, REDIS_URL: process.env.REDIS_URL! })).toMatch(
      /^NODE_ENV=production with Redis \(REDIS_URL\) needs TOKEN_ENCRYPTION_KEY/,
    );
  });

  test('NODE_ENV=production with a weak SESSION_SECRET (short, or of few distinct characters); a strong or unset one starts', async () => {
    for (const weak of ['abc', 'ab'.repeat(20)]) {
      const message = await refusal({ NODE_ENV: 'production', SESSION_SECRET: weak });
      expect(message).toMatch(/^NODE_ENV=production needs a SESSION_SECRET .* is weak/);
      expect(message).not.toContain(weak);
    }
    expect(await refusal({ NODE_ENV: 'production', SESSION_SECRET: strongSecret })).toBe('started');
    expect(await refusal({ NODE_ENV: 'production' })).toBe('started');
    // Outside production a weak secret is the developer's own business.
    expect(await refusal({ SESSION_SECRET: 'abc' })).toBe('started');
  });
});
