// The record cache and RedisSessionStore serving from memory on a real Redis Cluster (3 masters, a
// replica each, started here), on ioredis's Cluster and node-redis's createCluster: two game
// backends (two processes of one game) on Cluster clients of their own. What a player notices: a
// logged-in request sends no Redis command to any master; a record or session deleted or changed
// on any master is seen by the other backend; after a slot migration and after a master's failover
// nothing stale is served, and memory serves again once the new layout is tracked.
import express from 'express';
import session from 'express-session';
import request from 'supertest';
import { Cluster, Redis } from 'ioredis';
import { platformLogin } from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { newSessionKey, sampleRecord } from 'express-platform-login/testing';
import { RedisSessionStore } from '../../lib/session-store/redis-session-store';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import { hashSessionId } from '../../lib/core/hash';
import { keySlot } from '../../lib/redis/cluster-slots';
import type { RedisClient } from '../../lib/redis/redis-client';
import { startClusterBed, type ClusterBed, type ClusterBedNode } from '../helpers/failover-bed';
import { commandCounts } from '../helpers/command-counts';
import { sessionCookieFrom, sessionIdFrom } from '../helpers/session-cookie';
import { loginOptions, TEST_REDIRECT_URI } from '../helpers/test-app';
import { defaultClientKinds } from '../helpers/redis-clients';
import { valueOnce, waitUntil } from '../helpers/wait-until';
import { engineOf } from '../../lib/core/derived-engine';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';

/** How long another backend may take to see a change (50 ms promised; slack for a loaded machine). */
const SEEN_WITHIN_MS = 1000 + LOAD_ALLOWANCE_MS;
const TTL_MS = 60_000;
const RECORDS = 'login:';

/** ioredis 5 and node-redis 6 at their default protocols. */
const kinds = defaultClientKinds.filter((kind) =>
  ['ioredis 5 (RESP2)', 'node-redis 6 (RESP3)'].includes(kind.name),
);

let bed: ClusterBed;
let sim: PlatformSimulator;
/** An ioredis Cluster for the test's own writes (another connection than the backends'). */
let raw: Cluster;
const closers: Array<() => Promise<unknown>> = [];
/** Shards whose master a test killed (each has one replica: one failover per shard). */
const failedShards = new Set<number>();

beforeAll(async () => {
  [bed, sim] = await Promise.all([
    startClusterBed({ masters: 3, replicasPerMaster: 1 }),
    startSimulator(),
  ]);
  raw = new Cluster(bed.nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
  raw.on('error', () => undefined);
  await new Promise((resolve) => raw.once('ready', resolve));
}, 60_000);

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

afterAll(async () => {
  raw?.disconnect();
  await Promise.all([bed?.stop(), sim?.close()]);
});

/** Every node of the bed. */
const allNodes = (): ClusterBedNode[] => [...bed.masters, ...bed.replicas];

/** One command straight to a node's server (not through its proxy, not routed). */
async function onNode(node: ClusterBedNode, ...args: Array<string | number>): Promise<unknown> {
  return onNodeAs(false, node, ...args);
}

/** onNode, reading a replica's keys (READONLY first) when `replicaRead`. */
async function onNodeAs(
  replicaRead: boolean,
  node: ClusterBedNode,
  ...args: Array<string | number>
): Promise<unknown> {
  const connection = new Redis(node.server.port, '127.0.0.1', {
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  connection.on('error', () => undefined);
  try {
    // A replica answers reads of its master's keys only after READONLY.
    if (replicaRead) await connection.call('READONLY');
    const [command, ...rest] = args;
    return await connection.call(String(command), ...rest);
  } finally {
    // Not after a refused connection: disconnect() would leave ioredis's 2 s timer running.
    if (connection.status !== 'end') connection.disconnect();
  }
}

/** The live nodes that are masters now, with the slots each serves. */
async function currentMasters(): Promise<Array<{ node: ClusterBedNode; slots: number[] }>> {
  const masters: Array<{ node: ClusterBedNode; slots: number[] }> = [];
  const byId = new Map(allNodes().map((node) => [node.id, node]));
  const reply = (await raw.cluster('SHARDS')) as unknown[];
  for (const shard of reply as unknown[][]) {
    const fields = new Map<string, unknown>();
    for (let at = 0; at + 1 < shard.length; at += 2) fields.set(String(shard[at]), shard[at + 1]);
    const ranges = (fields.get('slots') as number[]).map(Number);
    const slots: number[] = [];
    for (let at = 0; at + 1 < ranges.length; at += 2)
      for (let slot = ranges[at]!; slot <= ranges[at + 1]!; slot += 1) slots.push(slot);
    for (const described of fields.get('nodes') as unknown[][]) {
      const node = new Map<string, unknown>();
      for (let at = 0; at + 1 < described.length; at += 2)
        node.set(String(described[at]), described[at + 1]);
      if (node.get('role') === 'master' && node.get('health') === 'online' && slots.length > 0) {
        masters.push({ node: byId.get(String(node.get('id')))!, slots });
      }
    }
  }
  return masters;
}

/** The master serving `key` now. */
async function masterOf(key: string): Promise<ClusterBedNode> {
  const slot = keySlot(key);
  const master = (await currentMasters()).find((candidate) => candidate.slots.includes(slot));
  if (master === undefined) throw new Error(`no master serves slot ${slot}`);
  return master.node;
}

/**
 * Moves `slot` to another master, as `redis-cli --cluster reshard` does: IMPORTING on the target,
 * MIGRATING on the source, MIGRATE of its keys, then SETSLOT NODE on every master.
 */
async function migrateSlot(slot: number): Promise<ClusterBedNode> {
  const masters = await currentMasters();
  const source = masters.find((master) => master.slots.includes(slot))!.node;
  const target = masters.find((master) => !master.slots.includes(slot))!.node;
  await onNode(target, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id);
  await onNode(source, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id);
  for (;;) {
    const keys = (await onNode(source, 'CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
    if (keys.length === 0) break;
    await onNode(source, 'MIGRATE', '127.0.0.1', target.server.port, '', 0, 5000, 'KEYS', ...keys);
  }
  for (const master of [target, source, ...masters.map((m) => m.node)])
    await onNode(master, 'CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
  return target;
}

/**
 * The key tracking's heartbeat (PING and a read of its mark per master, every 100 ms), the
 * clients' own upkeep (ioredis reads the slot map every 5 s) and the replicas' acknowledgements
 * (REPLCONF ACK every second): not a request's commands.
 */
const UPKEEP = new Set(['ping', 'mget', 'info', 'cluster', 'client', 'replconf']);

/** Commands every master ran during `action`, but the upkeep's. */
async function commandsDuring(action: () => Promise<void>): Promise<Record<string, number>> {
  const masters = (await currentMasters()).map(({ node }) => node);
  const counts = (): Promise<Array<Record<string, number>>> =>
    Promise.all(
      masters.map((node) =>
        commandCounts({ info: async (section) => String(await onNode(node, 'INFO', section)) }),
      ),
    );
  const before = await counts();
  await action();
  const after = await counts();
  const sent: Record<string, number> = {};
  after.forEach((counted, at) => {
    for (const [name, calls] of Object.entries(counted)) {
      const more = calls - (before[at]![name] ?? 0);
      if (more > 0 && !UPKEEP.has(name)) sent[name] = (sent[name] ?? 0) + more;
    }
  });
  return sent;
}

describe.each(kinds)('on $name', (kind) => {
  /** A game backend as the quick start builds it, both stores on a Cluster client of its own. */
  async function newBackend(): Promise<{
    app: express.Express;
    tokens: RedisTokenStore;
    sessions: RedisSessionStore;
  }> {
    const client = await kind.connectCluster(bed.nodes);
    const tokens = new RedisTokenStore({ redis: client, prefix: RECORDS });
    const sessions = new RedisSessionStore({ redis: client });
    closers.push(async () => {
      await Promise.all([tokens.close(), sessions.close()]);
      await kind.quit(client);
    });
    await waitUntil(() => tokens.recordCacheActive && sessions.serving, 'both caches on', 20_000);
    const login = platformLogin(loginOptions(sim, { store: tokens }));
    const app = express();
    app.use(
      session({
        store: sessions,
        secret: 'cluster-cache',
        resave: false,
        saveUninitialized: false,
      }),
    );
    app.use('/platform/callback', login.callback);
    app.use('/api', login.middleware());
    app.get('/api/me', (req, res) => res.json(req.platformUser));
    app.use(login.errorHandler());
    return { app, tokens, sessions };
  }

  /** A player logged in through `app`: its cookie, session key and record key. */
  async function loggedIn(app: express.Express) {
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-ada' });
    const entered = await request(app).get(`/platform/callback?code=${encodeURIComponent(code)}`);
    expect(entered.status).toBe(303);
    const sessionId = sessionIdFrom(entered);
    return {
      cookie: sessionCookieFrom(entered),
      sessionId,
      sessionKey: `sess:${sessionId}`,
      recordKey: `${RECORDS}t:${hashSessionId(sessionId)}`,
    };
  }

  const status = async (app: express.Express, cookie: string): Promise<number> =>
    (await request(app).get('/api/me').set('cookie', cookie)).status;

  /** What `app` answers once it answers 401, or after SEEN_WITHIN_MS. */
  const statusOnce401 = (app: express.Express, cookie: string): Promise<number> =>
    valueOnce(
      () => status(app, cookie),
      (answered) => answered === 401,
      SEEN_WITHIN_MS,
    );

  /** A store on a Cluster client of its own, its cache on. */
  /**
   * A store on its own Cluster client. Durability off: these tests are about what memory serves,
   * and one of them needs a write the failover loses (with durability the writer would write it
   * back on the new master: failover-cluster.test.ts).
   */
  async function newStore(): Promise<RedisTokenStore> {
    const client: RedisClient = await kind.connectCluster(bed.nodes);
    const store = new RedisTokenStore({ redis: client, prefix: RECORDS, durability: false });
    closers.push(async () => {
      await store.close();
      await kind.quit(client);
    });
    await waitUntil(() => store.recordCacheActive, 'the record cache on', 20_000);
    return store;
  }

  const versionOf = async (store: RedisTokenStore, sessionKey: string) => {
    const read = await engineOf(store).records.get(sessionKey);
    return read.status === 'found' ? read.record.version : undefined;
  };

  test('a logged-in request with a fresh token sends no Redis command to any master', async () => {
    const { app, tokens, sessions } = await newBackend();
    const { cookie, sessionId } = await loggedIn(app);
    // Warm: Redis's reports of the login's own writes may arrive after the first read cached the
    // record or the session, dropping it (one read more, never a stale copy).
    await waitUntil(
      async () =>
        Object.keys(
          await commandsDuring(async () => {
            for (let i = 0; i < 3; i += 1) expect(await status(app, cookie)).toBe(200);
          }),
        ).length === 0,
      'the login to be served from memory',
    );
    // Memory is emptied whenever it may have missed a change, a master's lease running out
    // included (a heartbeat late on a loaded machine: docs/caching.md), and every emptying wakes the
    // login's watchers. What must hold: a request sends nothing when memory served the request
    // before it and nothing was emptied since that one began (it read what was missing). Requests
    // until 20 such ones were seen; one that read Redis every time fails at the first.
    let emptied = 0;
    const unwatch = [
      engineOf(tokens).changes!.watch(hashSessionId(sessionId), () => (emptied += 1)),
      sessions.watchSession(sessionId, () => (emptied += 1)),
    ];
    let checked = 0;
    let previous: { emptied: number; live: boolean } | undefined;
    for (let request = 0; checked < 20 && request < 300; request += 1) {
      const before = { emptied, live: tokens.recordCacheActive && sessions.serving };
      const sent = await commandsDuring(async () => expect(await status(app, cookie)).toBe(200));
      if (previous?.live === true && previous.emptied === emptied) {
        expect(sent).toEqual({});
        checked += 1;
      }
      previous = before;
    }
    for (const stop of unwatch) stop();
    expect(checked).toBe(20);
  });

  test('a record or a session deleted on any master: the other backend answers 401', async () => {
    const [a, b] = [await newBackend(), await newBackend()];
    // Logins until the records and the sessions have landed on every master.
    const recordMasters = new Set<string>();
    const sessionMasters = new Set<string>();
    const players: Array<Awaited<ReturnType<typeof loggedIn>>> = [];
    while ((recordMasters.size < 3 || sessionMasters.size < 3) && players.length < 40) {
      const player = await loggedIn(a.app);
      const [recordAt, sessionAt] = [
        await masterOf(player.recordKey),
        await masterOf(player.sessionKey),
      ];
      if (!recordMasters.has(recordAt.id) || !sessionMasters.has(sessionAt.id)) {
        recordMasters.add(recordAt.id);
        sessionMasters.add(sessionAt.id);
        players.push(player);
      }
    }
    expect([recordMasters.size, sessionMasters.size]).toEqual([3, 3]);
    for (const player of players) {
      expect(await status(a.app, player.cookie)).toBe(200);
      expect(await status(b.app, player.cookie)).toBe(200);
    }
    for (const [at, player] of players.entries()) {
      // Half the players lose their token record, the others their session.
      await raw.del(at % 2 === 0 ? player.recordKey : player.sessionKey);
      expect(await statusOnce401(b.app, player.cookie)).toBe(401);
      expect(await statusOnce401(a.app, player.cookie)).toBe(401);
    }
  });

  test('a record changed by another process on any master is the one served next', async () => {
    const [reader, writer] = [await newStore(), await newStore()];
    const masters = new Set<string>();
    for (let tries = 0; masters.size < 3 && tries < 40; tries += 1) {
      const sessionKey = newSessionKey();
      const master = await masterOf(`${RECORDS}t:${sessionKey}`);
      if (masters.has(master.id)) continue;
      masters.add(master.id);
      const put = (version: number) =>
        engineOf(writer).records.put(sessionKey, sampleRecord(version), {
          expectedVersion: version === 1 ? null : version - 1,
          ttlMs: TTL_MS,
        });
      expect(await put(1)).toBe(true);
      expect(
        await valueOnce(
          () => versionOf(reader, sessionKey),
          (v) => v === 1,
        ),
      ).toBe(1);
      expect(await put(2)).toBe(true);
      expect(
        await valueOnce(
          () => versionOf(reader, sessionKey),
          (v) => v === 2,
          SEEN_WITHIN_MS,
        ),
      ).toBe(2);
    }
    expect(masters.size).toBe(3);
  });

  test('a slot migration: nothing stale is served, and memory serves again after it', async () => {
    const [a, b] = [await newBackend(), await newBackend()];
    const player = await loggedIn(a.app);
    expect(await status(a.app, player.cookie)).toBe(200);
    expect(await status(b.app, player.cookie)).toBe(200);
    // Both keys' slots move to another master (the record's first, then the session's).
    const recordTarget = await migrateSlot(keySlot(player.recordKey));
    if ((await masterOf(player.sessionKey)).id !== recordTarget.id)
      await migrateSlot(keySlot(player.sessionKey));
    // Each client learns the new map from the MOVED its next read of a moved key gets; every copy
    // then goes, and memory serves again once every master is tracked under the new map: requests
    // of both backends send nothing to any master once more.
    await waitUntil(
      async () => {
        const sent = await commandsDuring(async () => {
          for (let i = 0; i < 5; i += 1) {
            expect(await status(a.app, player.cookie)).toBe(200);
            expect(await status(b.app, player.cookie)).toBe(200);
          }
        });
        return Object.keys(sent).length === 0;
      },
      'memory to serve again after the migration',
      20_000,
    );
    expect(
      a.tokens.recordCacheActive &&
        b.tokens.recordCacheActive &&
        a.sessions.serving &&
        b.sessions.serving,
    ).toBe(true);
    // The record deleted on the master it moved to, by hand: both answer 401.
    const master = await masterOf(player.recordKey);
    expect(master.id).toBe(recordTarget.id);
    expect(await onNode(master, 'DEL', player.recordKey)).toBe(1);
    expect(await statusOnce401(b.app, player.cookie)).toBe(401);
    expect(await statusOnce401(a.app, player.cookie)).toBe(401);
  }, 60_000);

  test("a master's failover: a write the failover lost is never served from memory", async () => {
    const [reader, writer] = [await newStore(), await newStore()];
    let sessionKey = newSessionKey();
    while (failedShards.has((await masterOf(`${RECORDS}t:${sessionKey}`)).shard))
      sessionKey = newSessionKey();
    const recordKey = `${RECORDS}t:${sessionKey}`;
    const master = await masterOf(recordKey);
    const shard = master.shard;
    failedShards.add(shard);
    expect(
      await engineOf(writer).records.put(sessionKey, sampleRecord(1), {
        expectedVersion: null,
        ttlMs: TTL_MS,
      }),
    ).toBe(true);
    // Version 1 reached the replica; version 2 is held back on its way there, read and kept in memory.
    await waitUntil(async () => {
      const replica = bed.replicas.find((node) => node.shard === shard)!;
      return (await onNodeAs(true, replica, 'EXISTS', recordKey).catch(() => 0)) === 1;
    }, 'version 1 on the replica');
    bed.setReplicationDelay(10_000);
    try {
      expect(
        await engineOf(writer).records.put(sessionKey, sampleRecord(2), {
          expectedVersion: 1,
          ttlMs: TTL_MS,
        }),
      ).toBe(true);
      expect(
        await valueOnce(
          () => versionOf(reader, sessionKey),
          (v) => v === 2,
        ),
      ).toBe(2);
      await bed.killMaster(shard);
      await bed.waitForPromotion(shard);
    } finally {
      bed.setReplicationDelay(0);
    }
    // From here on the reader answers what the new master holds (version 1), never version 2.
    const seen = new Set<number | undefined | 'failed'>();
    await waitUntil(
      async () => {
        const version = await versionOf(reader, sessionKey).catch(() => 'failed' as const);
        seen.add(version);
        return version === 1 && reader.recordCacheActive;
      },
      'the reader to serve from memory again, on the new master',
      30_000,
    );
    expect(seen.has(2)).toBe(false);
    // And it is tracked there: a DEL on the new master is seen.
    const promoted = await masterOf(recordKey);
    expect(promoted.shard).toBe(shard);
    expect(promoted.id).not.toBe(master.id);
    expect(await onNode(promoted, 'DEL', recordKey)).toBe(1);
    expect(
      await valueOnce(
        () => versionOf(reader, sessionKey),
        (v) => v === undefined,
        SEEN_WITHIN_MS,
      ),
    ).toBeUndefined();
  }, 90_000);
});
