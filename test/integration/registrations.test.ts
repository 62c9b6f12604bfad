// Several registrations behind one platformLogin(), on a real redis-server (ioredis and node-redis)
// and the simulator over HTTP: each registration's callback and refreshes with its own client, the
// player joined by unionid across registrations, browsers and "processes" (two PlatformLogins on
// one Redis), a late unionid, two registrations in one browser, and a removed registration.
import express, { type Express } from 'express';
import session, { MemoryStore } from 'express-session';
import request from 'supertest';
import { Redis } from 'ioredis';
import {
  MemoryTokenStore,
  platformLogin,
  RedisTokenStore,
  type TokenStore,
  type PlatformLogin,
  type PlatformLoginOptions,
} from 'express-platform-login';
import {
  DEMO_CLIENT_ID,
  startSimulator,
  type PlatformSimulator,
} from 'express-platform-login/simulator';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { defaultClientKinds } from '../helpers/redis-clients';
import type { RedisClient } from '../../lib/redis/redis-client';
import { loginOptions, SESSION_SECRET } from '../helpers/test-app';
import { sessionCookieFrom } from '../helpers/session-cookie';
import { BOTH_CLIENTS, entryCode, MINI, MINI_URI, WEB_URI } from '../helpers/two-registrations';

/** Redis on both libraries, and a store of the studio's own (MemoryTokenStore: the derived engine). */
const kinds = [
  ...['ioredis 5 (RESP2)', 'node-redis 6 (RESP3)'].map((name) => ({
    name,
    kind: defaultClientKinds.find((kind) => kind.name === name),
  })),
  { name: 'MemoryTokenStore (the derived engine)', kind: undefined },
];

let redis: TestRedisServer;
let sim: PlatformSimulator;
let lateSim: PlatformSimulator;
/** A client of its own, to look at what Redis holds. */
let raw: Redis;

beforeAll(async () => {
  const clients = BOTH_CLIENTS;
  // Every request refreshes (30 s tokens, 60 s skew): each refresh is counted by client_id.
  [redis, sim, lateSim] = await Promise.all([
    startRedisServer(),
    startSimulator({ clients, accessTokenLifetimeSeconds: 30 }),
    startSimulator({ clients, accessTokenLifetimeSeconds: 30, unionIdOnRefreshOnly: true }),
  ]);
  raw = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
}, 30_000);
afterAll(async () => {
  raw?.disconnect();
  await Promise.all([redis?.stop(), sim?.close(), lateSim?.close()]);
});

/** The options of a game with the registrations `web` (first) and `mini`. */
const twoRegistrations = (platform: PlatformSimulator, store: TokenStore) =>
  loginOptions(platform, {
    store,
    registrationName: 'web',
    redirectUri: WEB_URI,
    registrations: [{ name: 'mini', ...MINI, redirectUri: MINI_URI }],
  });

/** A game process: every callback, `/api/me`, `/api/logout-everywhere`; sessions shared. */
function gameProcess(options: PlatformLoginOptions, sessions: MemoryStore): Express {
  const login = platformLogin(options);
  const app = express();
  app.use(
    session({ secret: SESSION_SECRET, resave: false, saveUninitialized: false, store: sessions }),
  );
  app.use(login.callbacks);
  app.get('/api/me', login.middleware(), (req, res) => {
    const { openId, unionId, scope, registration } = req.platformUser!;
    res.json({ openId, unionId, scope, registration });
  });
  app.post('/api/logout-everywhere', login.logoutEverywhere());
  (app as unknown as { login: PlatformLogin }).login = login;
  return app;
}
const loginOf = (app: Express): PlatformLogin => (app as unknown as { login: PlatformLogin }).login;

/** Enters `openId` through a registration; resolves the session cookie (reusing `cookie`). */
async function enter(
  app: Express,
  platform: PlatformSimulator,
  openId: string,
  via: 'web' | 'mini',
  cookie?: string,
): Promise<string> {
  const { code, path } = entryCode(platform, openId, via);
  const entry = request(app).get(`${path}?code=${code}`);
  const res = await (cookie === undefined ? entry : entry.set('Cookie', cookie));
  expect(res.status).toBe(303);
  return sessionCookieFrom(res);
}

const me = (app: Express, cookie: string) =>
  request(app).get('/api/me').set('Cookie', cookie).set('Accept', 'application/json');

describe.each(kinds)('on $name', ({ kind }) => {
  let client: RedisClient;
  let store: TokenStore;
  let prefix: string;
  let sessions: MemoryStore;
  let a: Express;
  let b: Express;

  /** The keys the store holds (Redis only). */
  const keys = async (pattern: string): Promise<string[] | undefined> =>
    kind === undefined ? undefined : raw.keys(`${prefix}${pattern}`);

  beforeAll(async () => {
    if (kind !== undefined) client = await kind.connect({ port: redis.port });
  });
  afterAll(async () => {
    if (kind !== undefined) await kind.quit(client);
  });
  afterEach(async () => {
    if (store instanceof RedisTokenStore) await store.close();
  });
  beforeEach(() => {
    prefix = `reg:${Math.random().toString(36).slice(2)}:`;
    store =
      kind === undefined ? new MemoryTokenStore() : new RedisTokenStore({ redis: client, prefix });
    sessions = new MemoryStore();
    a = gameProcess(twoRegistrations(sim, store), sessions);
    b = gameProcess(twoRegistrations(sim, store), sessions);
    sim.resetCalls();
    lateSim.resetCalls();
  });

  test("each registration's callback; the player says which; refreshes go to their own client only", async () => {
    const web = await enter(a, sim, 'player-ada', 'web');
    const mini = await enter(b, sim, 'player-ada', 'mini');
    expect((await me(a, web)).body).toEqual({
      openId: 'player-ada',
      unionId: 'union-ada',
      scope: expect.any(Array),
      registration: 'web',
    });
    expect((await me(b, mini)).body).toMatchObject({
      openId: 'mini-game.player-ada',
      unionId: 'union-ada',
      registration: 'mini',
    });
    for (let i = 0; i < 3; i += 1) {
      expect((await me(b, web)).status).toBe(200);
      expect((await me(a, mini)).status).toBe(200);
    }
    // Every request refreshed, each with the client of the login's registration: a refresh with
    // another registration's client_id would have been refused by the platform (401 above).
    expect(sim.callsOfClient(DEMO_CLIENT_ID).refresh_token).toBeGreaterThanOrEqual(3);
    expect(sim.callsOfClient(MINI.clientId).refresh_token).toBeGreaterThanOrEqual(3);
    expect(sim.callsOfClient(DEMO_CLIENT_ID).refresh_token).toBe(
      sim.calls.refresh_token - sim.callsOfClient(MINI.clientId).refresh_token,
    );
  });

  test('log out everywhere: every registration, browser and process; another player untouched', async () => {
    const web1 = await enter(a, sim, 'player-ada', 'web');
    const web2 = await enter(b, sim, 'player-ada', 'web');
    const mini = await enter(a, sim, 'player-ada', 'mini');
    const other = await enter(b, sim, 'player-bo', 'mini');
    expect(await loginOf(a).sessionsOf({ unionId: 'union-ada' })).toBe(3);
    expect(await loginOf(b).sessionsOf('player-ada')).toBe(3);

    const out = await request(b).post('/api/logout-everywhere').set('Cookie', mini);
    expect(out.status).toBe(204);
    for (const [app, cookie] of [
      [a, web1],
      [b, web2],
      [a, mini],
      [b, web1],
    ] as const) {
      expect((await me(app, cookie)).body).toMatchObject({ error: 'login_required' });
    }
    expect((await me(a, other)).status).toBe(200);
    expect(await loginOf(a).sessionsOf({ unionId: 'union-ada' })).toBe(0);
    // Nothing readable about the player in Redis: keys name hashes, never an openId or unionid.
    expect((await keys('*'))?.join(' ') ?? '').not.toMatch(/player-|union-|mini-game/);
  });

  test('a late unionid: the login joins its player at the refresh that brings it, and is logged out with it', async () => {
    const events: string[] = [];
    const late = (app: Express) => loginOf(app).on('playerJoined', (e) => events.push(e.via));
    a = gameProcess(twoRegistrations(lateSim, store), sessions);
    b = gameProcess(twoRegistrations(lateSim, store), sessions);
    late(a);
    late(b);
    const web = await enter(a, lateSim, 'player-cy', 'web');
    const mini = await enter(b, lateSim, 'player-cy', 'mini');
    // No unionid yet: the two logins are two players.
    expect(events).toEqual([]);
    expect(await loginOf(a).sessionsOf({ unionId: 'union-cy' })).toBe(0);
    // The next request refreshes; the refresh answer carries the unionid: both join.
    expect((await me(a, web)).body).toMatchObject({ unionId: 'union-cy', registration: 'web' });
    expect((await me(b, mini)).body).toMatchObject({ unionId: 'union-cy', registration: 'mini' });
    expect(events).toEqual(['refresh', 'refresh']);
    expect(await loginOf(a).sessionsOf({ unionId: 'union-cy' })).toBe(2);

    expect((await request(a).post('/api/logout-everywhere').set('Cookie', web)).status).toBe(204);
    expect((await me(b, mini)).status).toBe(401);
    expect((await me(a, web)).status).toBe(401);
  });

  test("two registrations in one browser: a new session, the replaced login's tokens ended", async () => {
    const web = await enter(a, sim, 'player-ada', 'web');
    const mini = await enter(a, sim, 'player-ada', 'mini', web);
    expect(mini).not.toBe(web);
    expect((await me(a, mini)).body).toMatchObject({ registration: 'mini' });
    expect((await me(a, web)).status).toBe(401);
    // One login left, and one record in Redis: none orphaned.
    expect(await loginOf(a).sessionsOf({ unionId: 'union-ada' })).toBe(1);
    if (kind !== undefined) expect(await keys('t:*')).toHaveLength(1);
  });

  test('a registration removed from the options: its login is refused (reauth_required), never refreshed by another', async () => {
    const mini = await enter(a, sim, 'player-bo', 'mini');
    const webOnly = platformLogin(
      loginOptions(sim, { store, registrationName: 'web', redirectUri: WEB_URI }),
    );
    const app = express();
    app.use(
      session({ secret: SESSION_SECRET, resave: false, saveUninitialized: false, store: sessions }),
    );
    app.get('/api/me', webOnly.middleware(), (_req, res) => res.json({}));
    sim.resetCalls();
    const res = await request(app)
      .get('/api/me')
      .set('Cookie', mini)
      .set('Accept', 'application/json');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'reauth_required' });
    expect(sim.calls.refresh_token).toBe(0);
    // The record is gone: the player enters again.
    expect((await me(a, mini)).status).toBe(401);
  });

  test("a registration whose secret the platform refuses: its refreshes fail naming it, the other's go on", async () => {
    const mini = await enter(a, sim, 'player-bo', 'mini');
    const web = await enter(a, sim, 'player-ada', 'web');
    const mistyped = {
      name: 'mini',
      ...MINI,
      clientSecret: 'not-mini-secret',
      redirectUri: MINI_URI,
    };
    const c = gameProcess({ ...twoRegistrations(sim, store), registrations: [mistyped] }, sessions);
    const failed: { registration: string | undefined; code: string }[] = [];
    loginOf(c).on('refreshFailed', ({ registration, code }) => failed.push({ registration, code }));
    sim.resetCalls();
    // Its access token is still valid: the player is served while the log names the registration.
    expect((await me(c, mini)).body).toMatchObject({ registration: 'mini' });
    expect(failed).toEqual([{ registration: 'mini', code: 'ERR_PLATFORM_MISCONFIGURED' }]);
    expect(sim.callsOfClient(MINI.clientId).refresh_token).toBe(1);
    expect(sim.callsOfClient(DEMO_CLIENT_ID).refresh_token).toBe(0);
    expect((await me(c, web)).body).toMatchObject({ registration: 'web' });
    expect(sim.callsOfClient(DEMO_CLIENT_ID).refresh_token).toBe(1);
    expect(failed).toHaveLength(1);
  });

  test('a unionid that changes for the same login is refused and said, not followed', async () => {
    const refused: string[] = [];
    loginOf(a).on('unionIdRefused', (e) => refused.push(e.sessionHash));
    const web = await enter(a, sim, 'player-ada', 'web');
    sim.setUnionId('player-ada', 'union-other');
    try {
      // The next request refreshes; its answer carries the other unionid.
      expect((await me(a, web)).body).toMatchObject({ unionId: 'union-ada' });
    } finally {
      sim.setUnionId('player-ada', 'union-ada');
    }
    expect(refused).toHaveLength(1);
    expect(await loginOf(a).sessionsOf({ unionId: 'union-other' })).toBe(0);
    expect(await loginOf(a).sessionsOf({ unionId: 'union-ada' })).toBe(1);
  });

  test('jobs reach the player through any registration', async () => {
    await enter(a, sim, 'player-ada', 'web');
    await enter(b, sim, 'player-ada', 'mini');
    const viaMini = await loginOf(a).forPlayer({
      openId: 'mini-game.player-ada',
      registration: 'mini',
    });
    expect(viaMini.user.unionId).toBe('union-ada');
    const viaUnion = await loginOf(b).forPlayer({ unionId: 'union-ada' });
    expect(['web', 'mini']).toContain(viaUnion.user.registration);
    expect(await loginOf(a).logoutPlayer('player-ada')).toBe(2);
    await expect(loginOf(a).forPlayer({ unionId: 'union-ada' })).rejects.toMatchObject({
      error: 'login_required',
    });
  });
});
