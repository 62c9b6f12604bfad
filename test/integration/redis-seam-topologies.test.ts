// The Redis command seam on a Cluster and behind Sentinel, on each library at its default
// protocol: commands and scripts reach the node owning their key (with the NOSCRIPT fallback per
// node); key tracking runs per Cluster master and follows the Sentinel's master (node-redis 5's
// Sentinel, which has no duplicate(), says once why it cannot and never goes live).
import { Redis } from 'ioredis';
import type { KeyChangeListener } from '../../lib/caching/key-tracking';
import { trackKeys } from '../../lib/caching/cluster-key-tracking';
import { redisCommands, type RedisClient } from '../../lib/redis/redis-client';
import { PUT_IF_VERSION, READ_WITH_TTL } from '../../lib/stores/scripts';
import { defaultClientKinds } from '../helpers/redis-clients';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-cluster';
import {
  SENTINEL_MASTER_NAME,
  startRedisSentinel,
  type TestRedisSentinel,
} from '../helpers/redis-sentinel';
import { waitUntil } from '../helpers/wait-until';

function recorder() {
  const unavailable: string[] = [];
  const changed: string[] = [];
  const listener: KeyChangeListener = {
    changed: (key) => changed.push(key),
    allChanged: () => undefined,
    liveChanged: () => undefined,
    unavailable: (reason) => unavailable.push(reason),
  };
  return { unavailable, changed, listener };
}

describe('Cluster', () => {
  let cluster: TestRedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster.stop();
  });

  describe.each(defaultClientKinds)('$name', (kind) => {
    let client: RedisClient;
    beforeAll(async () => {
      client = await kind.connectCluster(cluster.nodes);
    });
    afterAll(async () => {
      await kind.quit(client);
    });

    test('commands and scripts reach the node of their key, scripts loaded per node', async () => {
      const seam = redisCommands(client);
      expect(seam.topology).toBe('cluster');
      await Promise.all(
        cluster.servers.map(async (server) => {
          const node = new Redis(server.port, '127.0.0.1');
          await node.script('FLUSH');
          node.disconnect();
        }),
      );
      // Hash tags that fall in slots of different masters.
      for (const tag of ['a', 'b', 'c', 'd', 'e']) {
        const key = `topo-${kind.library}:{${tag}}:t`;
        expect(await seam.script(PUT_IF_VERSION, [key], ['', '1|x', '60000'])).toBe(1);
        const [value] = (await seam.script(READ_WITH_TTL, [key], [])) as [string, number];
        expect(value).toBe('1|x');
        expect(await seam.run('GET', key)).toBe('1|x');
        expect(await seam.run('DEL', key)).toBe(1);
      }
    });

    test('key tracking per master: a change on every master is reported', async () => {
      const record = recorder();
      const tracking = trackKeys(redisCommands(client), 'topo:', record.listener);
      try {
        await waitUntil(() => tracking.live, 'tracking on', 10_000);
        // Hash tags that fall in slots of different masters.
        const keys = ['a', 'b', 'c', 'd', 'e'].map((tag) => `topo:{${tag}}:k`);
        const writer = redisCommands(client);
        for (const key of keys) await writer.run('SET', key, ['1']);
        await waitUntil(() => keys.every((key) => record.changed.includes(key)), 'the reports');
        expect(record.unavailable).toEqual([]);
      } finally {
        await tracking.close();
      }
      expect(tracking.live).toBe(false);
    });
  });
});

describe('Sentinel', () => {
  let sentinel: TestRedisSentinel;
  beforeAll(async () => {
    sentinel = await startRedisSentinel();
  }, 30_000);
  afterAll(async () => {
    await sentinel.stop();
  });

  describe.each(defaultClientKinds)('$name', (kind) => {
    let client: RedisClient;
    beforeAll(async () => {
      client = await kind.connectSentinel(sentinel.sentinels, SENTINEL_MASTER_NAME);
    });
    afterAll(async () => {
      await kind.quit(client);
    });

    test('commands and scripts go to the master', async () => {
      const seam = redisCommands(client);
      expect(seam.topology).toBe('sentinel');
      const key = `topo-${kind.name}:{s}:t`;
      expect(await seam.script(PUT_IF_VERSION, [key], ['', '1|x', '60000'])).toBe(1);
      const master = new Redis(sentinel.master.port, '127.0.0.1');
      expect(await master.get(key)).toBe('1|x');
      master.disconnect();
    });

    const follows = kind.library === 'ioredis' || kind.name.startsWith('node-redis 6');
    test(
      follows
        ? 'key tracking follows the master: a change is reported'
        : "key tracking says once why it does not run (node-redis 5's Sentinel)",
      async () => {
        const record = recorder();
        const tracking = trackKeys(redisCommands(client), 'topo-s:', record.listener);
        try {
          if (follows) {
            await waitUntil(() => tracking.live, 'tracking on', 5000);
            const master = new Redis(sentinel.master.port, '127.0.0.1');
            await master.set('topo-s:k', '1');
            master.disconnect();
            await waitUntil(() => record.changed.includes('topo-s:k'), 'the report');
          } else {
            await waitUntil(() => record.unavailable.length === 1, 'unavailable');
            expect(tracking.live).toBe(false);
          }
        } finally {
          await tracking.close();
        }
      },
    );
  });
});
