// Issue 25 item 5: `logoutPlayer()` called while entries of that player are exchanging their codes
// wins. The entry reads the store's login generation before the exchange, and its first write is
// refused when the player was logged out everywhere since. Memory store and RedisTokenStore
// (the integration run's redis-server, with its record cache), against the real simulator.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Redis } from 'ioredis';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { MemoryTokenStore, RedisTokenStore, type TokenStore } from 'express-platform-login';
import { createTestApp, TEST_REDIRECT_URI } from '../helpers/test-app';
import { sessionCookieFrom } from '../helpers/session-cookie';
import { waitUntil } from '../helpers/wait-until';

let sim: PlatformSimulator;
let redis: Redis;
const redisStores: RedisTokenStore[] = [];

beforeAll(async () => {
  sim = await startSimulator();
  redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1, commandTimeout: 1000 });
});
afterAll(async () => {
  await Promise.all(redisStores.map((store) => store.close()));
  await redis.quit();
  await sim.close();
});
beforeEach(() => {
  sim.clearFaults();
  sim.resetCalls();
});

const stores: Array<[string, () => Promise<TokenStore>]> = [
  ['MemoryTokenStore', async () => new MemoryTokenStore()],
  [
    'RedisTokenStore',
    async () => {
      const store = new RedisTokenStore({ redis, prefix: `race-${randomUUID().slice(0, 8)}:` });
      redisStores.push(store);
      await waitUntil(() => store.recordCacheActive, 'the record cache to come on');
      return store;
    },
  ],
];

const entry = (openId: string): string =>
  `/platform/callback?code=${encodeURIComponent(sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId }))}`;

describe.each(stores)('%s', (_name, makeStore) => {
  test('logoutPlayer while five entries of the player exchange their codes: none of them survives', async () => {
    const store = await makeStore();
    const { app, login } = createTestApp({ sim, login: { store } });
    sim.injectFault({ kind: 'latency', ms: 600 }, { grant: 'authorization_code', times: 6 });
    const entries = Array.from({ length: 5 }, () =>
      request(app)
        .get(entry('player-ada'))
        .set('Accept', 'application/json')
        .then((res) => res),
    );
    // Another player entering meanwhile is not touched by Ada's log-out.
    const bo = request(app)
      .get(entry('player-bo'))
      .then((res) => res);
    await waitUntil(() => sim.calls.authorization_code === 6, 'the six exchanges to be under way');

    expect(await login.logoutPlayer('player-ada')).toBe(0);

    const answers = await Promise.all(entries);
    expect(answers.map((res) => res.status)).toEqual(Array(5).fill(401));
    for (const res of answers) expect(res.body).toEqual({ error: 'login_required' });
    expect(await login.sessionsOf('player-ada')).toBe(0);
    const boEntry = await bo;
    expect(boEntry.status).toBe(303);
    await request(app).get('/api/me').set('Cookie', sessionCookieFrom(boEntry)).expect(200);

    // An entry that begins after the log-out is a login like any other.
    const later = await request(app).get(entry('player-ada')).expect(303);
    const me = await request(app).get('/api/me').set('Cookie', sessionCookieFrom(later));
    expect(me.status).toBe(200);
    expect(me.body.openId).toBe('player-ada');
    expect(await login.sessionsOf('player-ada')).toBe(1);
  });
});
