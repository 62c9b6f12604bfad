// The failover test beds themselves (test/helpers/failover-bed.ts): replicas lag by the delay they
// are given, a SIGKILLed master is replaced by its replica, and what was still in the delay when the
// master died is gone from the new master: the loss the store must be tested against.
import { Cluster, Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { startClusterBed, startSentinelBed } from '../helpers/failover-bed';
import { eventually, waitUntil } from '../helpers/wait-until';

/** A key whose slot is in [first, last], asked of the cluster. */
async function keyInSlots(cluster: Cluster, [first, last]: [number, number]): Promise<string> {
  for (let index = 0; ; index += 1) {
    const slot = Number(await cluster.cluster('KEYSLOT', `epl-bed-${index}`));
    if (slot >= first && slot <= last) return `epl-bed-${index}`;
  }
}

describe('sentinel bed', () => {
  test('the replica lags the primary by the replication delay', async () => {
    const bed = await startSentinelBed({ replicationDelayMs: 1_000 });
    const primary = new Redis(bed.primary.port);
    const replica = new Redis(bed.replicas[0]!.port);
    try {
      await primary.set('lagging', '1');
      const writtenAt = Date.now();
      await sleep(200 - (Date.now() - writtenAt));
      expect(await replica.get('lagging')).toBeNull();
      // Then it comes (how soon after the delay depends on the machine's load).
      await waitUntil(
        async () => (await replica.get('lagging')) === '1',
        'the write on the replica',
      );

      // Without the delay the stream is as quick as it is direct, once what was held (the
      // sentinels' hello messages are replicated too) has drained: order is kept. A write then
      // arrives sooner than the delay would have let it.
      bed.setReplicationDelay(0);
      await sleep(1_100);
      await primary.set('prompt', '1');
      expect(await eventually(async () => (await replica.get('prompt')) === '1', 900)).toBe(true);
    } finally {
      primary.disconnect();
      replica.disconnect();
      await bed.stop();
    }
  });

  test('SIGKILL: the replica is promoted without the writes still in the delay', async () => {
    const bed = await startSentinelBed({ replicationDelayMs: 1_000 });
    const primary = new Redis(bed.primary.port);
    let client: Redis | undefined;
    try {
      // Nothing to promote while the primary lives: the wait fails instead of answering.
      await expect(bed.waitForPromotion(300)).rejects.toThrow(/timed out/);
      await primary.set('replicated', '1');
      const replica = new Redis(bed.replicas[0]!.port);
      try {
        await waitUntil(async () => (await replica.get('replicated')) === '1', 'the replica');
      } finally {
        replica.disconnect();
      }
      await primary.set('in-flight', '1');
      // Closed before the kill: a client of a dead server waits 2 s to close (ioredis).
      primary.disconnect();
      await bed.killPrimary();
      const promoted = await bed.waitForPromotion();
      expect(promoted.port).toBe(bed.replicas[0]!.port);

      client = new Redis({ sentinels: bed.sentinels, name: bed.masterName });
      expect(await client.call('ROLE')).toEqual(expect.arrayContaining(['master']));
      const server = await client.info('server');
      expect(server).toMatch(new RegExp(`^tcp_port:${promoted.port}\\r?$`, 'm'));
      expect(await client.get('replicated')).toBe('1');
      expect(await client.get('in-flight')).toBeNull();
    } finally {
      // Not twice: a second disconnect() leaves ioredis's 2 s timer on the closed connection.
      if (primary.status !== 'end') primary.disconnect();
      client?.disconnect();
      await bed.stop();
    }
  });
});

describe('cluster bed', () => {
  test('a killed master is replaced by its replica, without the writes still in the delay', async () => {
    const bed = await startClusterBed({ replicationDelayMs: 1_000 });
    const before = new Cluster(bed.nodes);
    let after: Cluster | undefined;
    try {
      const master = bed.masters[0]!;
      const key = await keyInSlots(before, master.slots);
      await before.set(`{${key}}replicated`, '1');
      // The replica has it once the delay has passed (read from the replica itself).
      const replica = new Redis(bed.replicas.find((node) => node.shard === 0)!.server.port);
      try {
        await replica.readonly();
        await sleep(200);
        expect(await replica.get(`{${key}}replicated`)).toBeNull();
        await sleep(1_300);
        expect(await replica.get(`{${key}}replicated`)).toBe('1');
      } finally {
        replica.disconnect();
      }
      await before.set(`{${key}}in-flight`, '1');
      await bed.killMaster(0);
      const promoted = await bed.waitForPromotion(0);
      expect(promoted.port).toBe(bed.replicas.find((node) => node.shard === 0)!.port);

      after = new Cluster(bed.nodes);
      expect(await after.get(`{${key}}replicated`)).toBe('1');
      expect(await after.get(`{${key}}in-flight`)).toBeNull();
      // A client that was connected through the failover finds the new master too.
      expect(await before.get(`{${key}}replicated`)).toBe('1');
    } finally {
      before.disconnect();
      after?.disconnect();
      await bed.stop();
    }
  });
});
