// A session whose login ended elsewhere (its token record deleted by hand, by logoutPlayer in
// another process, or expired) on a private redis-server with connect-redis and the simulator:
// a required route answers 401 and ends the session, with no renewal of it; an optional route keeps
// the session for the visitor without its login marker; either way the client's next request reads
// no token record.
import express from 'express';
import session from 'express-session';
import { RedisStore } from 'connect-redis';
import { Redis } from 'ioredis';
import { platformLogin, RedisTokenStore } from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { hashSessionId } from '../../lib/core/hash';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { enter } from '../helpers/records';
import { loginOptions, SESSION_SECRET } from '../helpers/test-app';
import { waitUntil } from '../helpers/wait-until';

const prefix = 'ended:';
const sessionKey = (sessionId: string): string => `${prefix}s:${sessionId}`;
const recordKey = (sessionId: string): string => `${prefix}t:{${hashSessionId(sessionId)}}:t`;

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

/** A game backend as the quick start builds it, one client for sessions and tokens. */
async function newApp(sessionStore?: (client: Redis) => session.Store) {
  const client = new Redis(server.port, '127.0.0.1', {
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
  });
  clients.push(client);
  const store = new RedisTokenStore({ redis: client, prefix: `${prefix}t:` });
  stores.push(store);
  await waitUntil(() => store.recordCacheActive, 'the record cache to come on');
  const login = platformLogin(loginOptions(sim, { store }));
  const app = express();
  app.use(
    session({
      store: sessionStore?.(client) ?? new RedisStore({ client, prefix: `${prefix}s:` }),
      secret: SESSION_SECRET,
      resave: false,
      saveUninitialized: false,
    }),
  );
  app.use('/platform/callback', login.callback);
  app.get('/optional', login.middleware({ optional: true }), (req, res) => {
    res.json({ player: req.hasPlatformLogin ? req.platformUser : null });
  });
  app.use('/api', login.middleware());
  app.get('/api/me', (req, res) => res.json(req.platformUser));
  return { app, store, login };
}

/** Calls of one Redis command the server has run so far. */
async function calls(command: string): Promise<number> {
  const stats = await raw.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

/** Token-record reads (a cache miss runs one script; a direct read is a GET) and session renewals. */
async function counts() {
  return {
    scripts: (await calls('evalsha')) + (await calls('eval')),
    gets: await calls('get'),
    expires: await calls('expire'),
  };
}

/** Deletes the key and resolves once the app's store has had Redis's message about it. */
async function deleted(store: RedisTokenStore, sessionId: string, key: string): Promise<void> {
  const seen = store.waitForChange(sessionId, 10_000);
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
    const seen = store.waitForChange(ada.sessionId, 10_000);
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
    const { app, store } = await newApp(
      (client) => new FailingDestroy({ client, prefix: `${prefix}s:` }),
    );
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
