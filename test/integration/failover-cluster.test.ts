// A Redis Cluster master failover loses no refreshed record (docs/durability.md): three masters,
// each with a replica whose replication stream runs a second behind from the refresh's write on
// (test/helpers/failover-bed.ts), shard 0's master killed (SIGKILL) while its replica lacks the
// rotated record, on both clients.
import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { RedisTokenStore } from 'express-platform-login';
import { startClusterBed, type ClusterBed, type ClusterBedNode } from '../helpers/failover-bed';
import { LAG_MS, type Kind } from '../helpers/failover-backends';
import { valueOnce, waitUntil } from '../helpers/wait-until';
import { recordAt } from '../helpers/records';
import { hashSessionId } from '../../lib/core/hash';
import { engineOf } from '../../lib/core/derived-engine';
import { keySlot } from '../../lib/redis/cluster-slots';
import { sampleRecord } from '../../lib/testing/samples';

jest.setTimeout(60_000);

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
    const bed = await startClusterBed();
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
      bed.setReplicationDelay(LAG_MS);
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
