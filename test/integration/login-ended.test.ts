// A session whose login ended elsewhere (its token record deleted by hand, by logoutPlayer in
// another process, or expired) on a private redis-server with connect-redis and the simulator:
// a required route answers 401 and ends the session, with no renewal of it; an optional route keeps
// the session for the visitor without its login marker; either way the client's next request reads
// no token record.
import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import request from 'supertest';
import session from 'express-session';
import { RedisStore } from 'connect-redis8';
import { Redis } from 'ioredis';
import { platformLogin, RedisTokenStore } from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { hashSessionId } from '../../lib/core/hash';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { enter } from '../helpers/records';
import { entryApp, loginOptions, TEST_REDIRECT_URI } from '../helpers/test-app';
import { sessionCookieFrom, sessionIdFrom } from '../helpers/session-cookie';
import { waitUntil } from '../helpers/wait-until';
import { commandCount } from '../helpers/command-counts';
import { engineOf } from '../../lib/core/derived-engine';

const prefix = 'ended:';
const sessionKey = (sessionId: string): string => `${prefix}s:${sessionId}`;
const recordKey = (sessionId: string): string => `${prefix}t:t:${hashSessionId(sessionId)}`;

let server: TestRedisServer;
let sim: PlatformSimulator;
let raw: Redis;
const clients: Redis[] = [];
const stores: RedisTokenStore[] = [];

beforeAll(async () => {
  [server, sim] = await Promise.all([startRedisServer(), startSimulator()]);
  raw = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  for (const client of clients) client.disconnect();
  raw.disconnect();
  await Promise.all([server.stop(), sim.close()]);
});

interface AppOptions {
  /** The session store, on the app's client (connect-redis by default). */
  sessionStore?: (client: Redis) => session.Store;
  /** RedisTokenStore's `encryptionKeys`. */
  encryptionKeys?: { id: string; key: string }[];
  /** `handleErrors: false`, with an error middleware of the app's own that reads the session. */
  ownErrors?: boolean;
  /** RedisTokenStore's `recordCache` (on by default). */
  recordCache?: boolean;
}

/** A game backend as the quick start builds it, one client for sessions and tokens. */
async function newApp({
  sessionStore,
  encryptionKeys,
  ownErrors,
  recordCache = true,
}: AppOptions = {}) {
  const client = new Redis(server.port, '127.0.0.1', {
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
  });
  clients.push(client);
  const store = new RedisTokenStore({
    redis: client,
    prefix: `${prefix}t:`,
    ...(encryptionKeys ? { encryptionKeys } : {}),
    recordCache,
  });
  stores.push(store);
  if (recordCache) await waitUntil(() => store.recordCacheActive, 'the record cache to come on');
  const login = platformLogin(
    loginOptions(sim, { store, ...(ownErrors ? { handleErrors: false } : {}) }),
  );
  const app = entryApp(login, {
    store: sessionStore?.(client) ?? new RedisStore({ client, prefix: `${prefix}s:` }),
    api: true,
  });
  app.get('/optional', login.middleware({ optional: true }), (req, res) => {
    res.json({ player: req.platformUser ?? null });
  });
  if (ownErrors) {
    app.use(
      (
        err: { status?: number; code?: string },
        req: Request,
        res: Response,
        _next: NextFunction,
      ) => {
        // What an app's error page might do: look at the session (a flash message, a log line).
        res
          .status(err.status ?? 500)
          .json({ code: err.code, openId: req.session.platformLogin?.openId });
      },
    );
  }
  return { app, store, login };
}

/** Calls of one Redis command the server has run so far. */
function calls(command: string): Promise<number> {
  return commandCount(raw, command);
}

/** Token-record reads (a cache miss runs one script; a direct read is a GET) and session renewals. */
async function counts() {
  return {
    scripts: (await calls('evalsha')) + (await calls('eval')),
    gets: await calls('get'),
    expires: await calls('expire'),
  };
}

/** Resolves once the store is told the session's record or lock changed (10 s at most). */
function nextChange(store: RedisTokenStore, sessionId: string): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unwatch();
      resolve();
    };
    const timer = setTimeout(done, 10_000);
    const unwatch = engineOf(store).changes!.watch(hashSessionId(sessionId), done);
  });
}

/** Deletes the key and resolves once the app's store has had Redis's message about it. */
async function deleted(store: RedisTokenStore, sessionId: string, key: string): Promise<void> {
  const seen = nextChange(store, sessionId);
  await raw.del(key);
  await seen;
}

describe('a required route', () => {
  test('a record deleted by hand: 401 login_required, the session ends, and it is not renewed first', async () => {
    const { app, store } = await newApp();
    const { agent, sessionId } = await enter(app, sim);
    await agent.get('/api/me').set('Accept', 'application/json').expect(200);
    expect(await raw.exists(sessionKey(sessionId))).toBe(1);

    const before = await counts();
    await deleted(store, sessionId, recordKey(sessionId));
    const res = await agent.get('/api/me').set('Accept', 'application/json');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'login_required' });
    await waitUntil(
      async () => (await raw.exists(sessionKey(sessionId))) === 0,
      'the session to go',
    );
    const after = await counts();
    // One record read (a script, which runs a GET of its own), sent when Redis reported the DEL
    // and taken by the request; the session read; express-session did not renew the dead session.
    expect(after.scripts - before.scripts).toBe(1);
    expect(after.gets - before.gets).toBe(2);
    expect(after.expires - before.expires).toBe(0);

    // The client's next request: its session is not found, so no token record is read.
    const next = await counts();
    await agent.get('/api/me').set('Accept', 'application/json').expect(401);
    const last = await counts();
    expect(last.gets - next.gets).toBe(1);
    expect(last.scripts - next.scripts).toBe(0);
    expect(await raw.exists(sessionKey(sessionId), recordKey(sessionId))).toBe(0);
  });

  test('logoutPlayer in another process: the next request is 401 and ends that session only', async () => {
    const { app, store } = await newApp();
    const other = await newApp();
    const ada = await enter(app, sim, 'player-ada');
    const bob = await enter(app, sim, 'player-bo');
    await ada.agent.get('/api/me').expect(200);
    const seen = nextChange(store, ada.sessionId);
    expect(await other.login.logoutPlayer('player-ada')).toBe(1);
    await seen;

    await ada.agent.get('/api/me').set('Accept', 'application/json').expect(401);
    await waitUntil(
      async () => (await raw.exists(sessionKey(ada.sessionId))) === 0,
      "Ada's session to go",
    );
    expect(await raw.exists(sessionKey(bob.sessionId))).toBe(1);
    expect((await bob.agent.get('/api/me').expect(200)).body.openId).toBe('player-bo');
  });

  test('a session store that fails to delete the session: still 401, the process goes on', async () => {
    let failing = false; // not during the entry, whose regenerate() deletes the session before
    class FailingDestroy extends RedisStore {
      override destroy(sid: string, callback?: (err?: unknown) => void): Promise<void> {
        if (!failing) return super.destroy(sid, callback);
        callback?.(new Error('the session store is down'));
        return Promise.resolve();
      }
    }
    const { app, store } = await newApp({
      sessionStore: (client) => new FailingDestroy({ client, prefix: `${prefix}s:` }),
    });
    const { agent, sessionId } = await enter(app, sim);
    failing = true;
    await deleted(store, sessionId, recordKey(sessionId));
    const res = await agent.get('/api/me').set('Accept', 'application/json');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'login_required' });
    // The session stays until its TTL, and is refused the same way.
    expect(await raw.exists(sessionKey(sessionId))).toBe(1);
    await agent.get('/api/me').set('Accept', 'application/json').expect(401);
  });
});

describe('a login this process cannot tell has ended', () => {
  test('a record sealed with a key this process lacks: 401, and the session lives on for a process that has it', async () => {
    const oldKey = { id: 'k1', key: randomBytes(32).toString('base64') };
    const newKey = { id: 'k2', key: randomBytes(32).toString('base64') };
    // A rolling deploy done in the wrong order: the new key already first on one process, not
    // yet known to the other.
    const upgraded = await newApp({ encryptionKeys: [newKey, oldKey] });
    const behind = await newApp({ encryptionKeys: [oldKey] });
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-ada' });
    const entry = await request(upgraded.app).get(`/platform/callback?code=${code}`).expect(303);
    const cookie = sessionCookieFrom(entry);
    const sessionId = sessionIdFrom(entry);

    const refused = await request(behind.app)
      .get('/api/me')
      .set('Cookie', cookie)
      .set('Accept', 'application/json');
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ error: 'login_required' });
    expect(await raw.exists(sessionKey(sessionId))).toBe(1);
    const stored = JSON.parse((await raw.get(sessionKey(sessionId)))!) as Record<string, unknown>;
    expect(stored).toHaveProperty('platformLogin');
    const served = await request(upgraded.app).get('/api/me').set('Cookie', cookie).expect(200);
    expect(served.body.openId).toBe('player-ada');
  });

  // Issue 25 item 3: with the record cache, concurrent requests of one session share one read,
  // and every one of them must get its `unreadable` answer (not only the first).
  test.each([
    ['with the record cache', true],
    ['without it', false],
  ])(
    'concurrent requests of a session whose record this process cannot read, %s: each is 401 (or a visitor), no session ends',
    async (_name, recordCache) => {
      const oldKey = { id: 'k1', key: randomBytes(32).toString('base64') };
      const newKey = { id: 'k2', key: randomBytes(32).toString('base64') };
      const upgraded = await newApp({ encryptionKeys: [newKey, oldKey], recordCache });
      const behind = await newApp({ encryptionKeys: [oldKey], recordCache });
      const unreadable: string[] = [];
      behind.login.on('unreadableRecord', (event) => unreadable.push(event.reason));
      const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-ada' });
      const entry = await request(upgraded.app).get(`/platform/callback?code=${code}`).expect(303);
      const cookie = sessionCookieFrom(entry);
      const sessionId = sessionIdFrom(entry);

      const burst = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          request(behind.app)
            .get(i % 2 === 0 ? '/api/me' : '/optional')
            .set('Cookie', cookie)
            .set('Accept', 'application/json'),
        ),
      );
      for (const [i, res] of burst.entries()) {
        if (i % 2 === 0) {
          expect(res.status).toBe(401);
          expect(res.body).toEqual({ error: 'login_required' });
        } else {
          expect(res.status).toBe(200);
          expect(res.body).toEqual({ player: null });
        }
      }
      expect(unreadable).toEqual(Array(8).fill('unknown_key'));
      // The session and its login marker are still there, and a process with the key serves it.
      const stored = JSON.parse((await raw.get(sessionKey(sessionId)))!) as Record<string, unknown>;
      expect(stored).toMatchObject({ platformLogin: { openId: 'player-ada' } });
      const served = await request(upgraded.app).get('/api/me').set('Cookie', cookie).expect(200);
      expect(served.body.openId).toBe('player-ada');
    },
  );

  test("handleErrors: false: the app's own error middleware gets the request with its session", async () => {
    const { app, store } = await newApp({ ownErrors: true });
    const { agent, sessionId } = await enter(app, sim);
    await deleted(store, sessionId, recordKey(sessionId));
    const res = await agent.get('/api/me');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 'ERR_PLATFORM_LOGIN_REQUIRED', openId: 'player-ada' });
    expect(await raw.exists(sessionKey(sessionId))).toBe(1);
  });
});

describe('an optional route', () => {
  test('a record gone: the request goes on as a visitor, the session stays without its login', async () => {
    const { app, store } = await newApp();
    const { agent, sessionId } = await enter(app, sim);
    expect((await agent.get('/optional').expect(200)).body.player.openId).toBe('player-ada');

    await deleted(store, sessionId, recordKey(sessionId));
    expect((await agent.get('/optional').expect(200)).body).toEqual({ player: null });
    const stored = JSON.parse((await raw.get(sessionKey(sessionId)))!) as Record<string, unknown>;
    expect(stored).not.toHaveProperty('platformLogin');

    // The visitor's next request reads no token record.
    const before = await counts();
    expect((await agent.get('/optional').expect(200)).body).toEqual({ player: null });
    expect((await counts()).scripts - before.scripts).toBe(0);
    // And a required route refuses it without ending the visitor's session.
    await agent.get('/api/me').set('Accept', 'application/json').expect(401);
    expect(await raw.exists(sessionKey(sessionId))).toBe(1);
  });
});
