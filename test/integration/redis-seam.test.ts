// The Redis command seam and its key tracking on every client kind (ioredis 5/6, node-redis 5/6,
// RESP2 and RESP3) against a real redis-server: commands, scripts with the NOSCRIPT fallback,
// replies as text or bytes, the client's own key prefix, and tracking under every fault (FLUSHDB,
// SWAPDB, a killed tracking connection, a stalled server, a silent connection, a refused CLIENT).
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import type { RedisCommands } from '../../lib/redis/commands';
import { KeyTracking, type KeyChangeListener } from '../../lib/caching/key-tracking';
import { TRACKING_TIMING } from '../../lib/caching/bounds';
import { redisCommands, type RedisClient } from '../../lib/redis/redis-client';
import { PUT_IF_VERSION, READ_WITH_TTL } from '../../lib/stores/scripts';
import { clientKinds, testWhere } from '../helpers/redis-clients';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { startTcpProxy } from '../helpers/tcp-proxy';
import { eventually, valueOnce, waitUntil } from '../helpers/wait-until';

let server: TestRedisServer;
let admin: Redis;

beforeAll(async () => {
  server = await startRedisServer(['--enable-debug-command', 'yes']);
  admin = new Redis(server.port, '127.0.0.1');
});

afterAll(async () => {
  await admin.quit();
  await server.stop();
});

const uniquePrefix = (): string => `seam-${randomBytes(4).toString('hex')}:`;

/** What a KeyTracking told, with when; each lease's end with how many `allChanged` came before. */
function recorder() {
  const changed: Array<{ key: string; at: number }> = [];
  const all: number[] = [];
  const live: Array<{ live: boolean; at: number }> = [];
  const leases: Array<{ until: number; allBefore: number }> = [];
  const unavailable: string[] = [];
  const listener: KeyChangeListener = {
    changed: (key) => changed.push({ key, at: Date.now() }),
    allChanged: () => all.push(Date.now()),
    liveChanged: (value) => live.push({ live: value, at: Date.now() }),
    renewed: (until) => leases.push({ until, allBefore: all.length }),
    unavailable: (reason) => unavailable.push(reason),
  };
  return { changed, all, live, leases, unavailable, listener };
}

/** The id of the connection that tracks keys (CLIENT LIST flag `t`). */
async function trackingClientIds(): Promise<string[]> {
  const list = String(await admin.call('CLIENT', 'LIST'));
  return list
    .split('\n')
    .filter((line) => /\bflags=\S*t/.test(line))
    .map((line) => /\bid=(\d+)/.exec(line)?.[1] ?? '');
}

describe.each(clientKinds)('$name', (kind) => {
  let client: RedisClient;
  let seam: RedisCommands;
  const trackings: KeyTracking[] = [];

  /** A KeyTracking on `commands`; resolves once live. */
  async function track(commands: RedisCommands, prefix: string) {
    const record = recorder();
    const tracking = new KeyTracking(commands, prefix, record.listener);
    trackings.push(tracking);
    await waitUntil(() => tracking.live, 'tracking to come on', 5000);
    return { tracking, ...record };
  }

  beforeAll(async () => {
    client = await kind.connect({ port: server.port });
    seam = redisCommands(client);
  });

  afterEach(async () => {
    await Promise.all(trackings.splice(0).map((tracking) => tracking.close()));
  });

  afterAll(async () => {
    await kind.quit(client);
  });

  test('says which topology it runs on', () => {
    expect(seam.topology).toBe('standalone');
  });

  test('plain commands, a Buffer argument sent as its bytes', async () => {
    const key = `${uniquePrefix()}k`;
    const binary = Buffer.from([0, 255, 1, 128, 10, 13]);
    expect(await seam.run('SET', key, [binary, 'PX', '60000', 'NX'])).toBe('OK');
    expect(await seam.run('SET', key, ['other', 'PX', '60000', 'NX'])).toBeNull();
    expect(await seam.run('STRLEN', key)).toBe(binary.length);
    expect(await admin.getBuffer(key)).toEqual(binary);
    expect(await seam.run('PEXPIRE', key, ['30000'])).toBe(1);
    expect(await seam.run('EXISTS', key)).toBe(1);
    expect(await seam.run('DEL', key)).toBe(1);
    expect(await seam.run('GET', key)).toBeNull();
    const index = `${uniquePrefix()}z`;
    await admin.zadd(index, 1, 'a', 2, 'b', 3, 'c');
    expect(await seam.run('ZREMRANGEBYSCORE', index, ['-inf', '1'])).toBe(1);
    expect(await seam.run('ZRANGE', index, ['0', '-1'])).toEqual(['b', 'c']);
    expect(await seam.run('ZREM', index, ['b', 'c'])).toBe(2);
  });

  test('scripts by EVALSHA, loaded again by EVAL after SCRIPT FLUSH (NOSCRIPT)', async () => {
    const key = `${uniquePrefix()}t`;
    await admin.script('FLUSH');
    expect(await seam.script(PUT_IF_VERSION, [key], ['', '1|x', '60000'])).toBe(1);
    expect(await seam.script(PUT_IF_VERSION, [key], ['', '1|y', '60000'])).toBe(0);
    const [text, ttl] = (await seam.script(READ_WITH_TTL, [key], [])) as [string, number];
    expect(text).toBe('1|x');
    expect(ttl).toBeGreaterThan(59_000);
    const [absent, noKey] = (await seam.script(READ_WITH_TTL, [`${key}-none`], [])) as [
      unknown,
      number,
    ];
    expect(absent).toBeNull();
    expect(noKey).toBe(-2);
  });

  testWhere(kind.keyPrefixes)(
    "the client's own key prefix: on commands, scripts and reports",
    async () => {
      const own = uniquePrefix();
      const prefixed = await kind.connect({ port: server.port, keyPrefix: own });
      try {
        const commands = redisCommands(prefixed);
        expect(commands.keyPrefix).toBe(own);
        await commands.run('SET', 'plain', ['1']);
        await commands.script(PUT_IF_VERSION, ['scripted'], ['', '1|x', '60000']);
        expect(await admin.get(`${own}plain`)).toBe('1');
        expect(await admin.get(`${own}scripted`)).toBe('1|x');
        const { changed } = await track(commands, 'rec:');
        await admin.set(`${own}rec:a`, '1');
        expect(await eventually(() => changed.some((entry) => entry.key === 'rec:a'))).toBe(true);
      } finally {
        await kind.quit(prefixed);
      }
    },
  );

  // How soon (the 50 ms bound) is measured by bench (`invalidation`) and bench/micro/tracking-bounds.ts,
  // not asserted here: a timing assertion fails on a loaded machine without a defect.
  test('a change made elsewhere is reported, only under the prefix', async () => {
    const prefix = uniquePrefix();
    const { tracking, changed } = await track(seam, prefix);
    expect(tracking.live).toBe(true);
    await admin.set(`${prefix}a`, '1');
    await admin.set(`other-${prefix}b`, '1');
    await admin.del(`${prefix}a`);
    await waitUntil(
      () => changed.filter((entry) => entry.key === `${prefix}a`).length === 2,
      'reports',
    );
    expect(changed.every((entry) => entry.key === `${prefix}a`)).toBe(true);
  });

  test('FLUSHDB: every key may have changed', async () => {
    const prefix = uniquePrefix();
    const { all, tracking, changed } = await track(seam, prefix);
    await admin.flushdb();
    expect(await eventually(() => all.length > 0)).toBe(true);
    expect(await eventually(() => tracking.live, 5000)).toBe(true);
    // And changes after it are reported again.
    await admin.set(`${prefix}after`, '1');
    expect(await eventually(() => changed.some((entry) => entry.key === `${prefix}after`))).toBe(
      true,
    );
  });

  test('SWAPDB (which Redis does not report): every key, no lease reaching past it by more than one', async () => {
    const prefix = uniquePrefix();
    const { all, live, leases, tracking } = await track(seam, prefix);
    const allBefore = all.length;
    await admin.swapdb(0, 1);
    // Taken once Redis ran it: a heartbeat that read the old mark was sent before this.
    const swappedAt = Date.now();
    try {
      await waitUntil(() => all.length > allBefore, 'allChanged after SWAPDB');
      // The bound, by design: until memory was emptied, no lease ran past the swap + the lease.
      const given = leases.filter((lease) => lease.allBefore <= allBefore);
      for (const { until } of given)
        expect(until).toBeLessThanOrEqual(swappedAt + TRACKING_TIMING.leaseMs);
      expect(live.some((entry) => !entry.live)).toBe(true);
      expect(await eventually(() => tracking.live, 5000)).toBe(true); // on the new database
    } finally {
      await admin.swapdb(0, 1);
    }
  });

  test('CLIENT KILL of the tracking connection: off at once, then on again', async () => {
    const prefix = uniquePrefix();
    const { tracking, live, changed } = await track(seam, prefix);
    // Every tracking connection: one an earlier test closed may still be listed.
    for (const id of await trackingClientIds()) await admin.call('CLIENT', 'KILL', 'ID', id);
    expect(await eventually(() => live.some((entry) => !entry.live), 2000)).toBe(true);
    expect(await eventually(() => tracking.live, 5000)).toBe(true);
    await admin.set(`${prefix}after`, '1');
    expect(await eventually(() => changed.some((entry) => entry.key === `${prefix}after`))).toBe(
      true,
    );
  });

  testWhere(kind.library === 'ioredis')(
    'CLIENT KILL of the subscriber the reports are redirected to: off at once, then on again',
    async () => {
      const prefix = uniquePrefix();
      const { tracking, live, changed } = await track(seam, prefix);
      const list = String(await admin.call('CLIENT', 'LIST'));
      // Every subscriber: one an earlier test closed may still be listed.
      const subscribers = list
        .split('\n')
        .filter((line) => /\bsub=1\b/.test(line))
        .map((line) => /\bid=(\d+)/.exec(line)![1]!);
      expect(subscribers.length).toBeGreaterThan(0);
      for (const id of subscribers) await admin.call('CLIENT', 'KILL', 'ID', id);
      expect(await eventually(() => live.some((entry) => !entry.live), 2000)).toBe(true);
      expect(await eventually(() => tracking.live, 5000)).toBe(true);
      await admin.set(`${prefix}after`, '1');
      expect(await eventually(() => changed.some((entry) => entry.key === `${prefix}after`))).toBe(
        true,
      );
    },
  );

  test('refused CLIENT (renamed): unavailable, never live, commands still work', async () => {
    const refusing = await startRedisServer(['--rename-command', 'CLIENT', '']);
    const refused = await kind.connect({ port: refusing.port });
    try {
      const commands = redisCommands(refused);
      const record = recorder();
      const tracking = new KeyTracking(commands, uniquePrefix(), record.listener);
      trackings.push(tracking);
      await waitUntil(() => record.unavailable.length === 1, 'unavailable', 5000);
      expect(tracking.live).toBe(false);
      expect(await commands.run('SET', 'k', ['1'])).toBe('OK');
    } finally {
      await kind.quit(refused);
      await refusing.stop();
    }
  });

  test('the client ending closes the tracking connection', async () => {
    const own = await kind.connect({ port: server.port });
    const commands = redisCommands(own);
    const record = recorder();
    const tracking = new KeyTracking(commands, uniquePrefix(), record.listener);
    await waitUntil(() => tracking.live, 'tracking on', 5000);
    const before = (await trackingClientIds()).length;
    await kind.quit(own);
    expect(await eventually(() => !tracking.live)).toBe(true);
    expect(
      await valueOnce(
        async () => (await trackingClientIds()).length,
        (count) => count === before - 1,
      ),
    ).toBe(before - 1);
  });
});

// Each kind on a proxy and a client of its own: the kinds wait side by side.
describe('through a proxy that goes silent (half-open)', () => {
  test.concurrent.each(clientKinds)(
    `$name: no lease reaches past the freeze by more than one (${TRACKING_TIMING.leaseMs} ms); off, on again after`,
    async (kind) => {
      const proxy = await startTcpProxy(server.port);
      const client = await kind.connect({ port: proxy.port });
      const record = recorder();
      const tracking = new KeyTracking(redisCommands(client), uniquePrefix(), record.listener);
      try {
        await waitUntil(() => tracking.live, 'tracking on', 5000);
        // Let a few heartbeats pass, so the freeze falls anywhere in the heartbeat cycle.
        await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 100));
        proxy.freeze();
        // Taken once nothing goes through: every heartbeat answered from here on was sent before.
        const frozenAt = Date.now();
        await waitUntil(() => !tracking.live, 'tracking off');
        // The bound, by design (each hit compares the lease's end with its own clock, however late
        // the timers run): no lease given reaches past the freeze by more than the lease.
        expect(record.leases.length).toBeGreaterThan(0);
        for (const { until } of record.leases)
          expect(until).toBeLessThanOrEqual(frozenAt + TRACKING_TIMING.leaseMs);
        proxy.thaw();
        expect(await eventually(() => tracking.live, 8000)).toBe(true);
      } finally {
        await tracking.close();
        await kind.quit(client);
        await proxy.close();
      }
    },
  );
});

// Half a second past a heartbeat's timeout: the lease (250 ms) runs out long before Redis wakes.
// One stall for every kind at once (each on a client and tracking of its own): the kinds wait it
// out side by side.
const stallSeconds = (TRACKING_TIMING.probeTimeoutMs + 500) / 1000;
test(`a stalled server (DEBUG SLEEP ${stallSeconds}, heartbeats time out): every kind off, then on again`, async () => {
  const clients = await Promise.all(clientKinds.map((kind) => kind.connect({ port: server.port })));
  const tracked = clientKinds.map((kind, i) => {
    const record = recorder();
    const tracking = new KeyTracking(redisCommands(clients[i]!), uniquePrefix(), record.listener);
    const offs = (): number => record.live.filter((entry) => !entry.live).length;
    return { kind, tracking, offs };
  });
  try {
    await waitUntil(() => tracked.every(({ tracking }) => tracking.live), 'tracking on', 5000);
    const offsBefore = tracked.map(({ offs }) => offs());
    // No heartbeat is answered while Redis sleeps: each lease runs out before it wakes.
    await admin.call('DEBUG', 'SLEEP', String(stallSeconds));
    for (const [i, { kind, offs }] of tracked.entries())
      expect([kind.name, offs() > offsBefore[i]!]).toEqual([kind.name, true]);
    for (const { kind, tracking } of tracked)
      expect([kind.name, await eventually(() => tracking.live, 8000)]).toEqual([kind.name, true]);
  } finally {
    await Promise.all(tracked.map(({ tracking }) => tracking.close()));
    await Promise.all(clientKinds.map((kind, i) => kind.quit(clients[i]!)));
  }
});
