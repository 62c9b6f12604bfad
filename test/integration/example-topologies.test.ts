// The example game backend (`example-app/server.ts`, spawned as `npm run example` runs it) on Redis
// through Sentinel (REDIS_SENTINELS + REDIS_SENTINEL_NAME) and on a Redis Cluster
// (REDIS_CLUSTER_NODES), on each REDIS_CLIENT: ready, a whole login through the embedded simulator
// with the token record and the session on the Redis behind it, the logout removing both, and a
// clean SIGTERM; with no Redis answering, started all the same, /healthz 503, and nothing left
// reconnecting once closed. Also: a start with two Redis variables set is refused, naming them.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { hashSessionId } from '../../lib/core/hash';
import { readConfig } from '../../example-app/config';
import { startExample } from '../../example-app/start';
import { QUIET } from '../helpers/test-app';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-cluster';
import {
  SENTINEL_MASTER_NAME,
  startRedisSentinel,
  type TestRedisSentinel,
} from '../helpers/redis-sentinel';
import { eventually, waitUntil } from '../helpers/wait-until';
import { spawnOnSources } from '../helpers/on-sources';
import { startDropper } from '../helpers/tcp-proxy';
import { ADA } from '../helpers/example-player';

const ROOT = join(__dirname, '../..');
const JSON_ACCEPT = { Accept: 'application/json' };

/** A spawned example: its output so far, and its addresses once it has printed them. */
interface SpawnedExample {
  child: ChildProcess;
  output: () => string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** Starts `example-app/server.ts` with `env` and none of this process's Redis variables. */
function spawnExample(env: Record<string, string>): SpawnedExample {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'NODE_OPTIONS',
    'REDIS_URL',
    'REDIS_SENTINELS',
    'REDIS_SENTINEL_NAME',
    'REDIS_CLUSTER_NODES',
    'REDIS_CLIENT',
  ]) {
    delete childEnv[name];
  }
  // Sources, not dist/: the package's names resolve to lib/ (see the helper).
  const child = spawnOnSources('example-app/server.ts', {
    cwd: ROOT,
    env: { ...childEnv, ...env },
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output, exited };
}

/** The example's URL and its embedded simulator's, once it says it has started. */
async function started(example: SpawnedExample): Promise<{ url: string; lobby: string }> {
  await waitUntil(
    () => {
      if (example.child.exitCode !== null)
        throw new Error(`the example exited at start:\n${example.output()}`);
      return /Example game backend: (\S+)/.test(example.output());
    },
    'the example to start',
    30_000,
  );
  const output = example.output();
  return {
    url: /Example game backend: (\S+)/.exec(output)![1]!.replace(/\/$/, ''),
    lobby: /Platform simulator \(lobby\): (\S+)/.exec(output)![1]!.replace(/\/$/, ''),
  };
}

async function stop(example: SpawnedExample | undefined): Promise<void> {
  if (example === undefined) return;
  if (example.child.exitCode === null && example.child.signalCode === null) {
    example.child.kill('SIGKILL');
  }
  await example.exited;
}

/** The name=value of the session cookie a response sets. */
function sessionCookieOf(res: Response): string {
  const cookie = res.headers.getSetCookie().find((line) => line.startsWith('connect.sid='));
  if (cookie === undefined) throw new Error('the entry set no session cookie');
  return cookie.split(';')[0]!;
}

/** The express-session id behind a signed `connect.sid=s:<id>.<signature>` cookie. */
function sessionIdOf(cookie: string): string {
  const id = /^s:(.+)\.[^.]+$/.exec(decodeURIComponent(cookie.slice('connect.sid='.length)))?.[1];
  if (id === undefined) throw new Error(`not a signed session cookie: ${cookie}`);
  return id;
}

/** What Redis holds for a login: its token record and its session, by the example's prefixes. */
async function keysOfLogin(redis: Redis | Cluster, sessionId: string) {
  const recordKey = `example:tokens:t:${hashSessionId(sessionId)}`;
  const sessionKey = `example:sess:${sessionId}`;
  const [record, session, sessionTtl] = await Promise.all([
    redis.exists(recordKey),
    redis.get(sessionKey),
    redis.pttl(sessionKey),
  ]);
  return { record: record === 1, session, sessionTtl };
}

type Topology = 'sentinel' | 'cluster';

/** Each topology on each client, named by the variables that set it. */
const RUNS: Array<[string, 'redis' | 'ioredis', Topology]> = [
  ['REDIS_SENTINELS + REDIS_SENTINEL_NAME', 'redis', 'sentinel'],
  ['REDIS_SENTINELS + REDIS_SENTINEL_NAME', 'ioredis', 'sentinel'],
  ['REDIS_CLUSTER_NODES', 'redis', 'cluster'],
  ['REDIS_CLUSTER_NODES', 'ioredis', 'cluster'],
];

let sentinel: TestRedisSentinel;
let cluster: TestRedisCluster;
/** The Redis behind each topology, read directly: the Sentinel's master, the Cluster. */
let master: Redis;
let clusterClient: Cluster;

beforeAll(async () => {
  [sentinel, cluster] = await Promise.all([startRedisSentinel(), startRedisCluster()]);
  master = new Redis(sentinel.master.url);
  clusterClient = new Cluster(cluster.nodes);
}, 60_000);
afterAll(async () => {
  master?.disconnect();
  clusterClient?.disconnect();
  await Promise.all([sentinel?.stop(), cluster?.stop()]);
});

/** The environment naming each topology, as an operator would write it. */
function redisEnv(topology: Topology): Record<string, string> {
  return topology === 'sentinel'
    ? {
        REDIS_SENTINELS: sentinel.sentinels.map(({ host, port }) => `${host}:${port}`).join(','),
        REDIS_SENTINEL_NAME: SENTINEL_MASTER_NAME,
      }
    : { REDIS_CLUSTER_NODES: cluster.nodes.map(({ host, port }) => `${host}:${port}`).join(', ') };
}

// Each run is a process of its own on its own logins (the Redis behind is shared, the keys are
// not): the runs go side by side (a concurrent test runs no *Each hook: each stops its own example).
describe('on each topology and REDIS_CLIENT', () => {
  test.concurrent.each(RUNS)(
    '%s, REDIS_CLIENT=%s: ready; a whole login through the embedded simulator, kept on the Redis behind it; logout removes it; SIGTERM exits 0',
    async (_, redisClient, topology) => {
      const redis = topology === 'sentinel' ? master : clusterClient;
      const example = spawnExample({ PORT: '0', REDIS_CLIENT: redisClient, ...redisEnv(topology) });
      try {
        const { url, lobby } = await started(example);
        // Ready: the example waits FIRST_CONNECTION_WAIT_MS for its first connection before it says
        // so; on a loaded machine the connection may come later (the example then said "not
        // answering yet"). The wait itself is example-app.test.ts's frozen-Redis test.
        const healthy = async () => (await fetch(`${url}/healthz`)).status === 200;
        expect(await eventually(healthy, 20_000)).toBe(true);
        const readyz = await fetch(`${url}/readyz`);
        expect(readyz.status).toBe(200);

        // The lobby's Enter game (its /enter) sends the browser to the callback with a code.
        const redirectUri = `${url}/platform/callback`;
        const entry = await fetch(
          `${lobby}/enter?open_id=player-ada&redirect_uri=${encodeURIComponent(redirectUri)}`,
          { redirect: 'manual' },
        );
        expect(entry.status).toBe(302);
        const callback = entry.headers.get('location')!;
        expect(callback.startsWith(`${redirectUri}?code=`)).toBe(true);
        const landing = await fetch(callback, {
          redirect: 'manual',
          headers: {
            Referer: `${lobby}/`,
            'Sec-Fetch-Site': 'cross-site',
            'Sec-Fetch-Mode': 'navigate',
            'Sec-Fetch-Dest': 'document',
          },
        });
        expect(landing.status).toBe(303);
        expect(landing.headers.get('location')).toBe('/');
        const cookie = sessionCookieOf(landing);
        const sessionId = sessionIdOf(cookie);

        const me = await fetch(`${url}/api/me`, { headers: { ...JSON_ACCEPT, Cookie: cookie } });
        expect(me.status).toBe(200);
        expect(await me.json()).toStrictEqual(ADA);
        const profile = await fetch(`${url}/api/profile`, {
          headers: { ...JSON_ACCEPT, Cookie: cookie },
        });
        expect(profile.status).toBe(200);
        expect(await profile.json()).toEqual({
          open_id: 'player-ada',
          unionid: 'union-ada',
          nickname: 'Ada',
        });

        // The token record and the session (connect-redis's JSON, expiring) are on this Redis.
        const held = await keysOfLogin(redis, sessionId);
        expect(held.record).toBe(true);
        expect(held.session).not.toBeNull();
        expect(JSON.parse(held.session!)).toHaveProperty('cookie');
        expect(held.sessionTtl).toBeGreaterThan(0);

        const logout = await fetch(`${url}/logout`, {
          method: 'POST',
          headers: { ...JSON_ACCEPT, Cookie: cookie },
        });
        expect(logout.status).toBe(204);
        const after = await fetch(`${url}/api/me`, { headers: { ...JSON_ACCEPT, Cookie: cookie } });
        expect(after.status).toBe(401);
        expect(await after.json()).toStrictEqual({ error: 'login_required' });
        expect(await keysOfLogin(redis, sessionId)).toMatchObject({ record: false, session: null });

        // close(): the server, the stores and the client end, and the process exits by itself.
        example.child.kill('SIGTERM');
        expect(await example.exited).toEqual([0, null]);
      } finally {
        await stop(example);
      }
    },
    60_000,
  );
});

/** What console.warn was called with, per scenario: the scenarios below run side by side. */
const warnings = new AsyncLocalStorage<string[]>();

describe('on each topology and REDIS_CLIENT, no Redis answering', () => {
  let warn: jest.SpyInstance;
  beforeAll(() => {
    warn = jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      warnings.getStore()?.push(args.map(String).join(' '));
    });
  });
  afterAll(() => warn.mockRestore());

  // In-process examples, each on a dropper of its own, waiting out reconnection delays: side by side.
  test.concurrent.each(RUNS)(
    '%s, REDIS_CLIENT=%s: it still starts, says so, answers /healthz 503, and once closed nothing of it reconnects',
    async (_, redisClient, topology) => {
      // sentinels, or Cluster nodes, that never answer.
      const dropper = await startDropper();
      const address = `127.0.0.1:${dropper.port}`;
      const warned: string[] = [];
      try {
        const running = await warnings.run(warned, () =>
          startExample(
            readConfig({
              PORT: '0',
              REDIS_CLIENT: redisClient,
              ...(topology === 'sentinel'
                ? { REDIS_SENTINELS: address, REDIS_SENTINEL_NAME: SENTINEL_MASTER_NAME }
                : { REDIS_CLUSTER_NODES: address }),
            }),
            { logger: QUIET },
          ),
        );
        try {
          expect(running.redis?.topology).toBe(topology);
          expect(running.redis?.kind).toBe(redisClient);
          expect(warned).toContainEqual(expect.stringContaining('Redis is not answering yet'));
          expect((await fetch(new URL('/healthz', running.url))).status).toBe(503);
        } finally {
          await running.close();
        }
        expect(dropper.connections()).toBeGreaterThan(0);
        expect(await dropper.silentWindowComes()).toBe(true);
      } finally {
        dropper.close();
      }
    },
    30_000,
  );
});

describe('refusals at start', () => {
  // What each refused configuration says is readConfig's (test/unit/example-config.test.ts); one is
  // enough to show the process says it on one line and exits without starting.
  test('REDIS_URL and REDIS_CLUSTER_NODES both set: exits 1 with one line naming the variables', async () => {
    const example = spawnExample({
      PORT: '0',
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_CLUSTER_NODES: '127.0.0.1:7000',
    });
    try {
      expect(await example.exited).toEqual([1, null]);
      const output = example.output();
      expect(output).toMatch(
        /^\[example-app\] could not start: REDIS_URL and REDIS_CLUSTER_NODES are both set: set only one of/m,
      );
      expect(output).not.toContain('Example game backend:');
    } finally {
      await stop(example);
    }
  }, 30_000);
});
