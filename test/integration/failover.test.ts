// A Redis failover loses no login and undoes no logout (docs/durability.md): a real primary, a replica whose replication
// stream runs a second behind, three sentinels, and two "processes" (two apps, each with its own
// Sentinel client, token store and session store), killed (SIGKILL) at the worst moments, on both
// clients. The platform (the simulator) rotates refresh tokens and counts a retired one presented.
import express, { type Express } from 'express';
import request from 'supertest';
import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { createCluster, createSentinel } from 'redis';
import {
  platformLogin,
  RedisSessionStore,
  RedisTokenStore,
  type PlatformLogin,
} from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import {
  startClusterBed,
  startSentinelBed,
  type ClusterBed,
  type ClusterBedNode,
  type SentinelBed,
} from '../helpers/failover-bed';
import { answerToken, loginOptions, redisSessions, TEST_REDIRECT_URI } from '../helpers/test-app';
import { sessionCookieFrom } from '../helpers/session-cookie';
import { eventually, valueOnce, waitUntil } from '../helpers/wait-until';
import { expiringIn, recordAt } from '../helpers/records';
import { hashSessionId } from '../../lib/core/hash';
import { engineOf } from '../../lib/core/derived-engine';
import type { ReplicaWaitOutcome } from '../../lib/durability/replica-acks';
import { keySlot } from '../../lib/redis/commands';
import { sampleRecord } from '../../lib/testing/samples';

jest.setTimeout(60_000);

const LAG_MS = 1000;

type Kind = 'ioredis' | 'node-redis';

/** A Sentinel client with the fail-fast options RedisTokenStore's documentation asks for. */
async function sentinelClient(kind: Kind, bed: SentinelBed) {
  const retry = (attempt: number): number => Math.min(attempt * 100, 500);
  if (kind === 'ioredis') {
    const client = new Redis({
      sentinels: bed.sentinels,
      name: bed.masterName,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
      connectTimeout: 2000,
      retryStrategy: retry,
      sentinelRetryStrategy: retry,
    });
    client.on('error', () => undefined);
    await new Promise((resolve) => client.once('ready', resolve));
    return { client, close: () => client.disconnect() };
  }
  const client = createSentinel({
    name: bed.masterName,
    sentinelRootNodes: bed.sentinels,
    nodeClientOptions: {
      disableOfflineQueue: true,
      socket: { connectTimeout: 2000, reconnectStrategy: retry },
    },
  });
  client.on('error', () => undefined);
  await client.connect();
  return { client, close: () => client.destroy() };
}

/** Asks the server at `port` on a connection of its own. */
async function onServer<T>(port: number, ask: (server: Redis) => Promise<T>): Promise<T> {
  const server = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await server.connect();
    return await ask(server);
  } finally {
    server.disconnect();
  }
}

/** The stored value of a session's record on the server at `port` (null when absent). */
const storedOn = (port: number, sessionKey: string): Promise<string | null> =>
  onServer(port, (server) => server.get(`fo:t:${sessionKey}`));

/** One game backend process: its own client, token store, session store and platformLogin; close() ends all of their connections. */
interface Backend {
  app: Express;
  login: PlatformLogin;
  store: RedisTokenStore;
  waits: ReplicaWaitOutcome[];
  close(): Promise<void>;
}

async function backend(kind: Kind, bed: SentinelBed, sim: PlatformSimulator): Promise<Backend> {
  const { client, close } = await sentinelClient(kind, bed);
  const store = new RedisTokenStore({ redis: client, prefix: 'fo:' });
  const waits: ReplicaWaitOutcome[] = [];
  store.on('replicaWait', (e) => waits.push(e.outcome));
  const login = platformLogin(loginOptions(sim, { store }));
  const app = express();
  const sessions = new RedisSessionStore({ redis: client });
  app.use(redisSessions(client, sessions));
  app.use('/platform/callback', login.callback);
  app.use('/api', login.middleware());
  app.get('/api/token', answerToken);
  app.post('/logout', login.logout());
  app.post('/logout-everywhere', express.json(), async (req, res, next) => {
    try {
      res.json({ sessions: await login.logoutPlayer(String(req.body.openId)) });
    } catch (error) {
      next(error);
    }
  });
  app.use(login.errorHandler());
  let closed = false;
  return {
    app,
    login,
    store,
    waits,
    close: async () => {
      if (closed) return;
      closed = true;
      await store.close();
      await sessions.close();
      close();
    },
  };
}

/** Enters through `through`; resolves the session cookie and the session key. */
async function enter(
  through: Backend,
  sim: PlatformSimulator,
  openId = 'player-ada',
): Promise<{ status: number; cookie: string; sessionKey: string }> {
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId });
  const res = await request(through.app).get(`/platform/callback?code=${code}`);
  if (res.status !== 303) return { status: res.status, cookie: '', sessionKey: '' };
  const cookie = sessionCookieFrom(res);
  const id = /^s:(.+)\.[^.]+$/.exec(decodeURIComponent(cookie.split('=')[1]!))![1]!;
  return { status: 303, cookie, sessionKey: hashSessionId(id) };
}

const tokenOf = (through: Backend, cookie: string) =>
  request(through.app).get('/api/token').set('Cookie', cookie);

/** Statuses a logged-in player gets from `through`, asked every 50 ms until `stop()`. */
function keepAsking(through: Backend, cookie: string) {
  const statuses: number[] = [];
  let asking = true;
  const done = (async () => {
    while (asking) {
      statuses.push((await tokenOf(through, cookie)).status);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    statuses,
    stop: async () => {
      asking = false;
      await done;
    },
  };
}

describe.each<Kind>(['ioredis', 'node-redis'])('a Sentinel failover on %s', (kind) => {
  let bed: SentinelBed;
  let sim: PlatformSimulator;
  let a: Backend;
  let b: Backend;

  beforeEach(async () => {
    bed = await startSentinelBed({ replicationDelayMs: LAG_MS });
    sim = await startSimulator({ rotateRefreshTokens: true });
    a = await backend(kind, bed, sim);
    b = await backend(kind, bed, sim);
  });

  afterEach(async () => {
    await a.close();
    await b.close();
    await sim.close();
    await bed.stop();
  });

  test('a refresh killed before the replica has its record: the record is written back, no retired token is spent, no 401', async () => {
    const player = await enter(a, sim);
    expect(player.status).toBe(303);
    // The login on the replica, whatever the store waited for.
    await bed.caughtUp();
    // The access token is due; its refresh is acknowledged on the replica like any other write.
    const due = await recordAt(a.store, player.sessionKey);
    await engineOf(a.store).records.put(
      player.sessionKey,
      { ...due!, ...expiringIn(-1000)(), version: due!.version + 1 },
      { expectedVersion: due!.version, ttlMs: 3600_000 },
    );
    const replaced = (await recordAt(a.store, player.sessionKey))!;
    await bed.caughtUp();

    // The platform rotates the refresh token; the primary dies before the new record reaches the
    // replica (it is a second behind).
    const refreshing = tokenOf(a, player.cookie).then((res) => res);
    await waitUntil(() => sim.calls.refresh_token === 1, 'the platform to rotate');
    await waitUntil(
      async () =>
        (await storedOn(bed.primary.port, player.sessionKey))?.startsWith(
          `${replaced.version + 1}|`,
        ) === true,
      'the rotated record on the primary',
    );
    await bed.killPrimary();
    const answered = await refreshing;
    // Answered with the new token (the record is kept in this process and written back), or 503.
    expect([200, 503]).toContain(answered.status);

    const other = keepAsking(b, player.cookie);
    const own = keepAsking(a, player.cookie);
    await bed.waitForPromotion();
    // Both processes serve the player again, with the rotated token.
    expect(
      await eventually(async () => (await tokenOf(b, player.cookie)).status === 200, 20_000),
    ).toBe(true);
    await other.stop();
    await own.stop();
    const stored = await valueOnce(
      () => recordAt(b.store, player.sessionKey),
      (record) => record !== undefined && record.version > replaced.version,
    );
    expect(stored?.version).toBe(replaced.version + 1);
    expect(sim.retiredTokenReuses).toBe(0);
    expect(
      [...other.statuses, ...own.statuses].filter((s) => s === 401 || (s >= 500 && s !== 503)),
    ).toEqual([]);
    expect((await tokenOf(a, player.cookie)).body.accessToken).toBe(stored?.accessToken);
  });

  test('a request whose token is usable never waits for a replica, while a refresh waits for one', async () => {
    const due = await enter(a, sim);
    const fresh = await enter(a, sim);
    expect([due.status, fresh.status]).toEqual([303, 303]);
    const record = (await recordAt(a.store, due.sessionKey))!;
    await engineOf(a.store).records.put(
      due.sessionKey,
      { ...record, ...expiringIn(-1000)(), version: record.version + 1 },
      { expectedVersion: record.version, ttlMs: 3600_000 },
    );
    const order: string[] = [];
    const refreshing = tokenOf(a, due.cookie).then((res) => order.push(`refresh ${res.status}`));
    await waitUntil(() => sim.calls.refresh_token === 1, 'the platform to rotate');
    // The refresh now waits about a second for the replica; the other player is served meanwhile.
    const served = await tokenOf(a, fresh.cookie);
    order.push(`fresh ${served.status}`);
    await refreshing;
    expect(order).toEqual(['fresh 200', 'refresh 200']);
    // The refresh's write was the last to wait, and a replica acknowledged it.
    expect(a.waits.at(-1)).toBe('acknowledged');
  });

  test('an entry whose writes did not reach the replica is not answered 303: the player enters again', async () => {
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-ada' });
    const entering = request(a.app)
      .get(`/platform/callback?code=${code}`)
      .then((res) => res);
    await waitUntil(() => sim.calls.authorization_code === 1, 'the code exchange');
    await waitUntil(async () => {
      const keys = await onServer(bed.primary.port, (server) => server.keys('*'));
      return ['fo:t:', 'sess:'].every((prefix) => keys.some((key) => key.startsWith(prefix)));
    }, "the login's record and session on the primary");
    await bed.killPrimary();
    const answer = await entering;
    expect(answer.status).toBe(503);
    expect(answer.body.error).toBe('store_unavailable');
    await bed.waitForPromotion();
    expect(await eventually(async () => (await enter(b, sim)).status === 303, 20_000)).toBe(true);
  });

  test('a logout killed before the replica has the deletion stays a logout', async () => {
    const player = await enter(a, sim);
    expect(player.status).toBe(303);
    const out = request(a.app)
      .post('/logout')
      .set('Cookie', player.cookie)
      .then((res) => res);
    // The deletion is made at once; its wait for the replica takes the lag.
    await waitUntil(
      async () => (await storedOn(bed.primary.port, player.sessionKey)) === null,
      'the deletion on the primary',
    );
    await bed.killPrimary();
    await out;
    await bed.waitForPromotion();
    // B's first reads may still meet its client's switch to the new primary.
    expect(
      await eventually(
        () =>
          recordAt(b.store, player.sessionKey).then(
            (record) => record === undefined,
            () => false,
          ),
        20_000,
      ),
    ).toBe(true);
    expect((await tokenOf(b, player.cookie)).status).toBe(401);
  });

  test('a player whose due token still works is served with the refreshed record before a replica holds it; the wait ends after', async () => {
    const player = await enter(a, sim);
    expect(player.status).toBe(303);
    const record = (await recordAt(a.store, player.sessionKey))!;
    // 30 s left: usable, and inside the 60 s refresh window, so this request refreshes.
    const waitsBeforePut = a.waits.length;
    await engineOf(a.store).records.put(
      player.sessionKey,
      { ...record, ...expiringIn(30_000)(), accessToken: 'at-before', version: record.version + 1 },
      { expectedVersion: record.version, ttlMs: 3600_000 },
    );
    await waitUntil(
      () => a.waits.length > waitsBeforePut,
      "the test's own write to be acknowledged",
    );
    const waitsBefore = a.waits.length;
    const served = await tokenOf(a, player.cookie);
    expect(served.status).toBe(200);
    expect(sim.calls.refresh_token).toBe(1);
    // Answered while the refresh's wait (a second of lag) was still running...
    const stored = (await recordAt(a.store, player.sessionKey))!;
    expect(stored.version).toBe(record.version + 2);
    expect(served.body.accessToken).toBe(stored.accessToken);
    expect(served.body.accessToken).not.toBe('at-before');
    expect(a.waits.length).toBe(waitsBefore);
    // ...which a replica then acknowledged.
    await waitUntil(() => a.waits.length > waitsBefore, "the refresh's wait to end");
    expect(a.waits.at(-1)).toBe('acknowledged');
  });

  test('a logout no replica acknowledged is answered 503, not 204', async () => {
    const player = await enter(a, sim);
    expect(player.status).toBe(303);
    await bed.caughtUp();
    bed.setReplicationDelay(5000);
    const out = await request(a.app).post('/logout').set('Cookie', player.cookie);
    expect(out.status).toBe(503);
    expect(out.body.error).toBe('store_unavailable');
    // The deletion was made on the primary all the same: the player is logged out there.
    expect((await tokenOf(a, player.cookie)).status).toBe(401);
  });

  test('a log out everywhere no replica acknowledged is answered 503; asked again once the primary and that process died, it holds: no logged-out session is served, the new primary keeps only the bystander', async () => {
    const ada = [await enter(a, sim), await enter(a, sim)];
    const bystander = await enter(a, sim, 'player-bo');
    expect([...ada, bystander].map((player) => player.status)).toEqual([303, 303, 303]);
    await bed.caughtUp();
    // The replica falls 5 s behind, beyond the 2 s wait.
    bed.setReplicationDelay(5000);
    const everywhere = (through: Backend) =>
      request(through.app).post('/logout-everywhere').send({ openId: 'player-ada' });
    const first = await everywhere(b);
    expect(first.status).toBe(503);
    expect(first.body.error).toBe('store_unavailable');
    // The primary dies before its replica has the deletions, and the process that made them too.
    await bed.killPrimary();
    await b.close();
    const promoted = await bed.waitForPromotion();
    // Asked again (on the surviving process): answered once the new primary holds the deletions.
    expect(await eventually(async () => (await everywhere(a)).status === 200, 20_000)).toBe(true);
    for (const player of ada) {
      const asked = await Promise.all([1, 2, 3].map(() => tokenOf(a, player.cookie)));
      expect(asked.map((res) => res.status)).toEqual([401, 401, 401]);
    }
    expect((await tokenOf(a, bystander.cookie)).status).toBe(200);
    const primary = new Redis({ host: promoted.host, port: promoted.port });
    try {
      const keys = (await primary.keys('fo:t:*')).sort();
      expect(keys).toEqual([`fo:t:${bystander.sessionKey}`]);
    } finally {
      primary.disconnect();
    }
  });

  test('with the replica too far behind, the player is answered after the timeout, and the wait is counted', async () => {
    await bed.caughtUp();
    bed.setReplicationDelay(5000);
    const player = await enter(a, sim);
    expect(player.status).toBe(303);
    expect(a.waits.at(-1)).toBe('timeout');
  });
});

/** A Cluster client of either library, fail-fast as RedisTokenStore's documentation asks. */
async function clusterClient(kind: Kind, bed: ClusterBed) {
  if (kind === 'ioredis') {
    const client = new Cluster(bed.nodes, {
      redisOptions: { maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 2000 },
      clusterRetryStrategy: (attempt) => Math.min(attempt * 100, 500),
    });
    client.on('error', () => undefined);
    await new Promise((resolve) => client.once('ready', resolve));
    return { client, close: () => client.disconnect() };
  }
  const client = createCluster({
    rootNodes: bed.nodes.map(({ host, port }) => ({ socket: { host, port } })),
    defaults: { socket: { connectTimeout: 2000, reconnectStrategy: () => 200 } },
  });
  client.on('error', () => undefined);
  await client.connect();
  return { client, close: () => client.destroy() };
}

/** A session key whose record lives in the slots of `master`. */
function sessionKeyOn(master: ClusterBedNode): string {
  for (;;) {
    const sessionKey = hashSessionId(randomBytes(16).toString('hex'));
    const slot = keySlot(sessionKey);
    if (slot >= master.slots[0] && slot <= master.slots[1]) return sessionKey;
  }
}

describe.each<Kind>(['ioredis', 'node-redis'])('a Cluster master failover on %s', (kind) => {
  test('a refreshed record whose master died before its replica had it is written back on the promoted replica', async () => {
    const bed = await startClusterBed({ replicationDelayMs: LAG_MS });
    const one = await clusterClient(kind, bed);
    const two = await clusterClient(kind, bed);
    const writer = new RedisTokenStore({ redis: one.client, prefix: 'fo:' });
    const reader = new RedisTokenStore({ redis: two.client, prefix: 'fo:', recordCache: false });
    try {
      const sessionKey = sessionKeyOn(bed.masters[0]!);
      const first = sampleRecord(1);
      const records = engineOf(writer).records;
      expect(await records.put(sessionKey, first, { expectedVersion: null, ttlMs: 3600_000 })).toBe(
        true,
      );
      await bed.caughtUp();
      // The refresh's write reaches the master; the master dies while its replica is a second behind.
      const second = { ...first, refreshToken: 'rotated-refresh-token', version: 2 };
      const writing = records.put(sessionKey, second, { expectedVersion: 1, ttlMs: 3600_000 });
      writing.catch(() => undefined);
      await waitUntil(
        async () => (await recordAt(reader, sessionKey))?.version === 2,
        'the rotated record on the master',
      );
      await bed.killMaster(0);
      await writing.catch(() => undefined);
      await bed.waitForPromotion(0);
      const stored = await valueOnce(
        () => recordAt(reader, sessionKey).catch(() => undefined),
        (record) => record?.version === 2,
        20_000,
      );
      expect(stored?.refreshToken).toBe('rotated-refresh-token');
    } finally {
      await writer.close();
      await reader.close();
      one.close();
      two.close();
      await bed.stop();
    }
  });
});
