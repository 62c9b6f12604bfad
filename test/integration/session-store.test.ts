// RedisSessionStore on a private redis-server, behind express-session in two app instances on
// clients of their own (two processes of one game): sessions served from memory with no Redis
// command, and every way a session can change elsewhere seen by the other instance — logout
// (destroy), the package's 401 for a login that ended, regenerate, a saved change, an operator's
// DEL, FLUSHDB, expiry, the invalidation channel going down; renewal only past its point; the
// memory bound; on ioredis 5/6 and node-redis 5/6; keys and JSON shared with connect-redis both ways.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import { RedisStore as ConnectRedis8 } from 'connect-redis8';
import { Redis } from 'ioredis';
import request from 'supertest';
import { platformLogin, RedisTokenStore } from 'express-platform-login';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { RedisSessionStore } from '../../lib/session-store/redis-session-store';
import { hashSessionId } from '../../lib/core/hash';
import { sessionCookieFrom, sessionIdFrom } from '../helpers/session-cookie';
import { entryApp, loginOptions, TEST_REDIRECT_URI } from '../helpers/test-app';
import type { RedisSessionStoreOptions } from '../../lib/session-store/session-store-options';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { usePrivateRedis } from '../helpers/bed';
import { eventually, valueOnce, waitUntil } from '../helpers/wait-until';
import { BACKGROUND_COMMANDS, commandCount, commandCounts } from '../helpers/command-counts';
import { defaultClientKinds, type ClientKind } from '../helpers/redis-clients';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';

/** How long another instance may take to see a change (one message, docs/caching.md; slack for a loaded machine). */
const SEEN_WITHIN_MS = 1000 + LOAD_ALLOWANCE_MS;

let server: TestRedisServer;
let sim: PlatformSimulator;
let raw: Redis;
const { closers } = usePrivateRedis((bed) => ({ server, sim, raw } = bed));

interface Instance {
  url: string;
  store: RedisSessionStore | ConnectRedis8;
}

/** The client kind the instances of the running describe block use (connect-redis: ioredis). */
let clientKind: ClientKind = defaultClientKinds[0]!;

/** Where instances run: a client kind on a redis-server, looked at through `raw`. */
interface RedisAt {
  kind: ClientKind;
  server: TestRedisServer;
  raw: Redis;
}

/** The file's redis-server, on the running describe block's client kind. */
const here = (): RedisAt => ({ kind: clientKind, server, raw });

/** express-session on `store` with routes that log in, read, change, regenerate and log out. */
async function startInstance(
  options: Partial<RedisSessionStoreOptions> = {},
  cookieMaxAgeMs?: number,
  kind: 'ours' | 'connect-redis' = 'ours',
  at: RedisAt = here(),
): Promise<Instance> {
  const client = kind === 'ours' ? await at.kind.connect({ port: at.server.port }) : undefined;
  const ioClient =
    kind === 'ours' ? undefined : new Redis(at.server.url, { maxRetriesPerRequest: 1 });
  const store =
    kind === 'ours'
      ? new RedisSessionStore({ redis: client!, ...options })
      : new ConnectRedis8({ client: ioClient! });
  const app = express();
  app.use(
    session({
      store,
      secret: 'session-store-test',
      resave: false,
      saveUninitialized: false,
      ...(cookieMaxAgeMs === undefined ? {} : { cookie: { maxAge: cookieMaxAgeMs } }),
    }),
  );
  type Data = { player?: string; level?: number };
  app.get('/login', (req, res) => {
    (req.session as Data).player = 'ada';
    res.json({ ok: true });
  });
  app.get('/me', (req, res) => {
    const { player, level } = req.session as Data;
    if (player === undefined) res.status(401).json({ error: 'login_required' });
    else res.json({ player, level: level ?? 0 });
  });
  app.get('/level-up', (req, res) => {
    const data = req.session as Data;
    data.level = (data.level ?? 0) + 1;
    res.json({ level: data.level });
  });
  app.get('/regenerate', (req, res, next) => {
    req.session.regenerate((error) => {
      if (error) return next(error);
      (req.session as Data).player = 'ada';
      res.json({ ok: true });
    });
  });
  app.get('/logout', (req, res, next) => {
    req.session.destroy((error) => (error ? next(error) : res.json({ ok: true })));
  });
  const http: Server = createServer(app);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    if (store instanceof RedisSessionStore) await store.close();
    if (client !== undefined) await at.kind.quit(client);
    ioClient?.disconnect();
  });
  if (store instanceof RedisSessionStore && options.maxCachedSessions !== 0) {
    await waitUntil(() => store.serving, 'the session cache to come on');
  }
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, store };
}

async function get(
  instance: Instance,
  path: string,
  cookie?: string,
): Promise<{ status: number; body: Record<string, unknown>; cookie: string | undefined }> {
  const answer = await fetch(`${instance.url}${path}`, {
    headers: cookie === undefined ? {} : { cookie },
  });
  const setCookie = answer.headers
    .getSetCookie()
    .find((c) => c.startsWith('connect.sid='))
    ?.split(';')[0];
  return {
    status: answer.status,
    body: (await answer.json()) as Record<string, unknown>,
    cookie: setCookie,
  };
}

async function login(instance: Instance): Promise<string> {
  const answer = await get(instance, '/login');
  expect(answer.cookie).toBeDefined();
  return answer.cookie!;
}

/** The session keys in Redis (not the key tracking's database mark, `sess:~db`). */
async function sessionKeys(at: RedisAt = here()): Promise<string[]> {
  return (await at.raw.keys('sess:*')).filter((key) => key !== 'sess:~db');
}

async function commandsDuring(
  action: () => Promise<void>,
  at: RedisAt = here(),
): Promise<Record<string, number>> {
  const before = await commandCounts(at.raw);
  await action();
  const after = await commandCounts(at.raw);
  return Object.fromEntries(
    Object.entries(after)
      .map(([name, calls]) => [name, calls - (before[name] ?? 0)] as const)
      .filter(([name, calls]) => calls > 0 && !BACKGROUND_COMMANDS.has(name)),
  );
}

/**
 * Runs `body` until a run during which the instance's memory served throughout: on, and never
 * emptied (every emptying wakes every watcher). Memory is emptied by design whenever it may have
 * missed a change, a lease run out on a loaded machine included (docs/caching.md), and the next
 * request then reads Redis; a run without one must send exactly what `body` expects.
 */
async function whileServing<T>(instance: Instance, body: () => Promise<T>): Promise<T> {
  const store = instance.store as RedisSessionStore;
  for (;;) {
    await waitUntil(() => store.serving, 'memory serving');
    let emptied = false;
    const unwatch = store.watchSession('a session no one has', () => (emptied = true));
    const result = await body().finally(unwatch);
    if (!emptied) return result;
  }
}

/** Warms both instances' memory with the session (a first read each). */
async function seenByBoth(a: Instance, b: Instance, cookie: string): Promise<void> {
  expect((await get(a, '/me', cookie)).status).toBe(200);
  expect((await get(b, '/me', cookie)).status).toBe(200);
}

/** What each instance answers the cookie once it answers 401 (its session ended), or after SEEN_WITHIN_MS. */
const statusesOnceLoggedOut = async (instances: Instance[], cookie: string): Promise<number[]> => {
  const statuses: number[] = [];
  for (const instance of instances) {
    statuses.push(
      await valueOnce(
        async () => (await get(instance, '/me', cookie)).status,
        (answered) => answered === 401,
        SEEN_WITHIN_MS,
      ),
    );
  }
  return statuses;
};

test("keys and JSON are connect-redis's: sessions move both ways between the two stores", async () => {
  const ours = await startInstance();
  const theirs = await startInstance({}, undefined, 'connect-redis');
  const fromOurs = await login(ours);
  expect((await get(theirs, '/me', fromOurs)).body).toEqual({ player: 'ada', level: 0 });
  const fromTheirs = await login(theirs);
  expect((await get(ours, '/me', fromTheirs)).body).toEqual({ player: 'ada', level: 0 });
  expect((await raw.keys('*')).every((key) => key.startsWith('sess:'))).toBe(true);
  const keys = await sessionKeys();
  expect(keys).toHaveLength(2);
  expect(await raw.ttl(keys[0]!)).toBeGreaterThan(86_000);
});

test('unknown options and a wrong client are refused, naming the option', () => {
  expect(() => new RedisSessionStore({ redis: raw, renewAfter: 2 })).toThrow(
    '`renewAfter` must be a number from 0 to 1',
  );
  // The unit and the range, as RedisTokenStore's options say them.
  expect(() => new RedisSessionStore({ redis: raw, operationTimeoutMs: 0 })).toThrow(
    '`operationTimeoutMs` must be an integer number of milliseconds from 1 to 60000',
  );
  expect(() => new RedisSessionStore({ redis: raw, ttlSeconds: 1.5 })).toThrow(
    '`ttlSeconds` must be an integer number of seconds from 1 to 31536000',
  );
  expect(() => new RedisSessionStore({ redis: {} as Redis })).toThrow(/redis/);
  expect(
    () => new RedisSessionStore({ redis: raw, ttl: 5 } as unknown as RedisSessionStoreOptions),
  ).toThrow(/ttl/);
});

describe.each(defaultClientKinds)('on $name', (kind) => {
  beforeAll(() => {
    clientKind = kind;
  });
  afterAll(() => {
    clientKind = defaultClientKinds[0]!;
  });

  test('a logged-in request is served from memory: no Redis command at all', async () => {
    const a = await startInstance();
    const cookie = await login(a);
    const sent = await whileServing(a, async () => {
      expect((await get(a, '/me', cookie)).status).toBe(200);
      return commandsDuring(async () => {
        for (let i = 0; i < 50; i += 1)
          expect((await get(a, '/me', cookie)).body).toEqual({ player: 'ada', level: 0 });
      });
    });
    expect(sent).toEqual({});
  });

  test('a session served from memory is answered asynchronously, as every store answers', async () => {
    const a = await startInstance();
    const cookie = await login(a);
    const store = a.store as RedisSessionStore;
    const [sid] = (await sessionKeys()).map((key) => key.slice('sess:'.length));
    const held = await whileServing(a, async () => {
      expect((await get(a, '/me', cookie)).status).toBe(200);
      let answered: unknown;
      const answer = new Promise<void>((resolve) =>
        store.get(sid!, (error, session) => {
          answered = error ?? session;
          resolve();
        }),
      );
      expect(answered).toBeUndefined();
      await answer;
      expect(answered).toMatchObject({ player: 'ada' });
      return store.cachedSessions;
    });
    expect(held).toBe(1);
  });

  test('logout (destroy) on one instance: the other sees no session', async () => {
    const [a, b] = [await startInstance(), await startInstance()];
    const cookie = await login(a);
    await seenByBoth(a, b, cookie);
    expect((await get(a, '/logout', cookie)).status).toBe(200);
    expect(await statusesOnceLoggedOut([a, b], cookie)).toEqual([401, 401]);
  });

  test('regenerate on one instance: the old session id ends on the other, the new one works there', async () => {
    const [a, b] = [await startInstance(), await startInstance()];
    const cookie = await login(a);
    await seenByBoth(a, b, cookie);
    const renewed = await get(a, '/regenerate', cookie);
    expect(renewed.cookie).toBeDefined();
    expect(renewed.cookie).not.toBe(cookie);
    expect(await statusesOnceLoggedOut([a, b], cookie)).toEqual([401, 401]);
    expect((await get(b, '/me', renewed.cookie)).status).toBe(200);
  });

  test('a change saved on one instance is what the other answers next', async () => {
    const [a, b] = [await startInstance(), await startInstance()];
    const cookie = await login(a);
    await seenByBoth(a, b, cookie);
    expect((await get(a, '/level-up', cookie)).body).toEqual({ level: 1 });
    const level = await valueOnce(
      async () => (await get(b, '/me', cookie)).body.level,
      (seen) => seen === 1,
      SEEN_WITHIN_MS,
    );
    expect(level).toBe(1);
  });

  test("an operator's DEL of the session key ends it on both instances", async () => {
    const [a, b] = [await startInstance(), await startInstance()];
    const cookie = await login(a);
    await seenByBoth(a, b, cookie);
    const [key] = await sessionKeys();
    await raw.del(key!);
    expect(await statusesOnceLoggedOut([a, b], cookie)).toEqual([401, 401]);
  });

  test('FLUSHDB ends every session on both instances', async () => {
    const [a, b] = [await startInstance(), await startInstance()];
    const cookie = await login(a);
    await seenByBoth(a, b, cookie);
    await raw.flushdb();
    expect(await statusesOnceLoggedOut([a, b], cookie)).toEqual([401, 401]);
  });

  test('the invalidation channel down: memory is not used, a DEL meanwhile is seen at once', async () => {
    const [a, b] = [await startInstance(), await startInstance()];
    const cookie = await login(a);
    await seenByBoth(a, b, cookie);
    // The tracking connections are the pub/sub clients; the DEL in the same transaction reaches no one.
    const [key] = await sessionKeys();
    await raw.multi().call('CLIENT', 'KILL', 'TYPE', 'pubsub').del(key!).exec();
    expect((await get(a, '/me', cookie)).status).toBe(401);
    expect((await get(b, '/me', cookie)).status).toBe(401);
    // The channel comes back by itself, and the cache with it.
    expect(await eventually(() => (a.store as RedisSessionStore).serving)).toBe(true);
  });

  test('renewAfter 0 renews on every request, as connect-redis does', async () => {
    const a = await startInstance({ renewAfter: 0 });
    const cookie = await login(a);
    await get(a, '/me', cookie);
    const expires = async (): Promise<number> => commandCount(raw, 'expire');
    const before = await expires();
    for (let i = 0; i < 5; i += 1) await get(a, '/me', cookie);
    await waitUntil(async () => (await expires()) - before >= 5, 'five renewals');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await expires()) - before).toBe(5);
  });

  test('a renewal never holds the answer: with writes paused in Redis, a session from memory is answered at once', async () => {
    // 20 s sessions renewed once 2 s of their life passed (the default renewAfter, 0.1): the
    // renewal is due while the cached entry has 18 s left, slack for a loaded machine. CLIENT PAUSE
    // WRITE holds the renewal (a write) in Redis while reads, and so the cache's heartbeats, go on.
    // The whole answer, body included (express-session sends the headers before `touch` answers),
    // must arrive while writes are still paused. Neither the store's deadline nor the client (no
    // command timeout) gives the renewal up while the pause holds it.
    const noCommandTimeout: ClientKind = {
      ...clientKind,
      connect: (place) => clientKind.connect({ ...place, libraryDefaults: true }),
    };
    const at = { ...here(), kind: noCommandTimeout };
    const options = { renewAfter: 0.1, operationTimeoutMs: 30_000 };
    const a = await startInstance(options, 20_000, 'ours', at);
    const store = a.store as RedisSessionStore;
    // Memory is emptied when its lease runs out (an event-loop stall on a loaded machine): a request
    // then reads Redis, as it must, and its read (a script) waits for the pause. A new login is
    // tried then, until memory served the whole request (a few tries at most).
    let status = 0;
    let body: unknown;
    let key = '';
    let ttlWhileHeld = 0;
    for (let attempt = 0; attempt < 8; attempt += 1) {
      const cookie = await login(a);
      const sid = decodeURIComponent(cookie)
        .replace(/^connect\.sid=s:/, '')
        .replace(/\.[^.]+$/, '');
      key = `sess:${sid}`;
      expect((await get(a, '/me', cookie)).status).toBe(200); // now in memory
      await waitUntil(async () => (await raw.pttl(key)) < 17_900, 'the renewal point');
      await waitUntil(() => store.serving, 'memory to serve');
      // Memory empties whole and only this test's reads fill it: none at all means the session
      // went with an emptying since. From here to the answer, an emptying is watched for.
      let emptied = store.cachedSessions === 0;
      const unwatch = store.watchSession('a session no one has', () => (emptied = true));
      try {
        if (emptied) continue;
        await raw.call('CLIENT', 'PAUSE', '30000', 'WRITE');
        try {
          const answered = await fetch(`${a.url}/me`, {
            headers: { cookie },
            signal: AbortSignal.timeout(10_000),
          });
          status = answered.status;
          body = await answered.json();
          ttlWhileHeld = await raw.pttl(key);
        } catch (error) {
          if (!emptied) throw error;
        } finally {
          await raw.call('CLIENT', 'UNPAUSE');
        }
      } finally {
        unwatch();
      }
      if (!emptied) break;
    }
    expect(status).toBe(200);
    expect(body).toEqual({ player: 'ada', level: 0 });
    // Answered while the renewal it started is still held by the pause.
    expect(ttlWhileHeld).toBeLessThan(17_900);
    // The renewal was sent, and lands once writes go on.
    await waitUntil(async () => (await raw.pttl(key)) > 19_000, 'the renewal after the pause');
  }, 60_000);

  test("the package's 401 for a login that ended elsewhere ends the session on both instances", async () => {
    /** A game backend as the quick start builds it, RedisSessionStore and RedisTokenStore on one client. */
    const newApp = async () => {
      const client = await clientKind.connect({ port: server.port });
      const tokens = new RedisTokenStore({ redis: client, prefix: 'login:' });
      const sessions = new RedisSessionStore({ redis: client });
      closers.push(async () => {
        await Promise.all([tokens.close(), sessions.close()]);
        await clientKind.quit(client);
      });
      await waitUntil(() => tokens.recordCacheActive && sessions.serving, 'both caches on');
      const login = platformLogin(loginOptions(sim, { store: tokens }));
      return entryApp(login, { store: sessions, api: true }).use(login.errorHandler());
    };
    const [a, b] = [await newApp(), await newApp()];
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-ada' });
    const entered = await request(a).get(`/platform/callback?code=${encodeURIComponent(code)}`);
    expect(entered.status).toBe(303);
    const [cookie, sessionId] = [sessionCookieFrom(entered), sessionIdFrom(entered)];
    await request(a).get('/api/me').set('cookie', cookie).expect(200);
    await request(b).get('/api/me').set('cookie', cookie).expect(200);
    // The login ends elsewhere (its token record deleted); instance a answers 401 and ends the session.
    const recordKey = `login:t:${hashSessionId(sessionId)}`;
    const record = await raw.getBuffer(recordKey);
    await raw.del(recordKey);
    await waitUntil(
      async () => (await request(a).get('/api/me').set('cookie', cookie)).status === 401,
      'the 401',
      SEEN_WITHIN_MS,
    );
    await waitUntil(
      async () => (await raw.exists(`sess:${sessionId}`)) === 0,
      'the session gone from Redis',
      SEEN_WITHIN_MS,
    );
    // With the record put back, b still refuses: the session it held in memory has ended too.
    await raw.set(recordKey, record!, 'PX', 60_000);
    const status = await valueOnce(
      async () => (await request(b).get('/api/me').set('cookie', cookie)).status,
      (answered) => answered === 401,
      SEEN_WITHIN_MS,
    );
    expect(status).toBe(401);
  });

  test('memory is bounded: at most maxCachedSessions are held, the others read Redis', async () => {
    const a = await startInstance({ maxCachedSessions: 2 });
    const [held, sent] = await whileServing(a, async () => {
      const cookies = [await login(a), await login(a), await login(a)];
      for (const cookie of cookies) expect((await get(a, '/me', cookie)).status).toBe(200);
      // The first, not read since, went: reading it sends a GET.
      return [
        (a.store as RedisSessionStore).cachedSessions,
        await commandsDuring(async () => {
          await get(a, '/me', cookies[0]);
        }),
      ] as const;
    });
    expect(held).toBe(2);
    expect(sent.get).toBe(1);
  });
});

/**
 * Runs `scenario` on every client kind at once, each on a redis-server of its own (its keys and its
 * command counts the scenario's alone): scenarios that wait out a session's lifetime wait it out
 * side by side. A failure names the kind it came from. (The renewal held by CLIENT PAUSE stays one
 * kind at a time: it needs memory on throughout, and four at once beside a CPU hog lost the lease
 * on every try.)
 */
async function onEveryKind(scenario: (at: RedisAt) => Promise<void>): Promise<void> {
  const outcomes = await Promise.allSettled(
    defaultClientKinds.map(async (kind) => {
      const own = await startRedisServer();
      const ownRaw = new Redis(own.url);
      closers.push(async () => {
        ownRaw.disconnect();
        await own.stop();
      });
      await scenario({ kind, server: own, raw: ownRaw });
    }),
  );
  outcomes.forEach((outcome, at) => {
    if (outcome.status === 'fulfilled') return;
    const error: unknown = outcome.reason;
    if (error instanceof Error)
      error.message = `on ${defaultClientKinds[at]!.name}: ${error.message}`;
    throw error;
  });
}

describe('session lifetimes, on every client kind side by side', () => {
  test('expiry: a session past its TTL is not served from memory', async () =>
    onEveryKind(async (at) => {
      // A 2 s cookie: the key gets a 2 s TTL; renewAfter 1 means no request renews it.
      const [a, b] = [
        await startInstance({ renewAfter: 1 }, 2000, 'ours', at),
        await startInstance({ renewAfter: 1 }, 2000, 'ours', at),
      ];
      const cookie = await login(a);
      await seenByBoth(a, b, cookie);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      expect((await get(a, '/me', cookie)).status).toBe(401);
      expect((await get(b, '/me', cookie)).status).toBe(401);
    }));

  test('renewal: requests send no EXPIRE until renewAfter of the lifetime has passed, then one', async () =>
    onEveryKind(async (at) => {
      // 6 s sessions renewed past half their life: 3 s for the early requests on a loaded machine.
      const a = await startInstance({ renewAfter: 0.5 }, 6000, 'ours', at);
      const cookie = await login(a);
      const early = await whileServing(a, async () => {
        expect((await get(a, '/me', cookie)).status).toBe(200);
        return commandsDuring(async () => {
          for (let i = 0; i < 10; i += 1) await get(a, '/me', cookie);
        }, at);
      });
      expect(early.expire).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 3200));
      const [key] = await sessionKeys(at);
      // The renewal follows the answer (it does not hold it): wait until Redis has it.
      const late = await commandsDuring(async () => {
        await get(a, '/me', cookie);
        await waitUntil(async () => (await at.raw.pttl(key!)) > 4500, 'the renewal');
      }, at);
      expect(late.expire).toBe(1);
    }));
});
