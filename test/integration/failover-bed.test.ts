// The failover test beds themselves (test/helpers/failover-bed.ts): replicas lag by the delay they
// are given, a SIGKILLed master is replaced by its replica, and what was still in the delay when the
// master died is gone from the new master: the loss the store must be tested against.
import { Cluster, Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { startClusterBed, startSentinelBed } from '../helpers/failover-bed';
import { waitUntil } from '../helpers/wait-until';

/** A key whose slot is in [first, last], asked of the cluster. */
async function keyInSlots(cluster: Cluster, [first, last]: [number, number]): Promise<string> {
  for (let index = 0; ; index += 1) {
    const slot = Number(await cluster.cluster('KEYSLOT', `epl-bed-${index}`));
    if (slot >= first && slot <= last) return `epl-bed-${index}`;
  }
}

/**
 * Writes `keyOf(attempt)` with `write` and reads it on the replica 200 ms later, expecting null: the
 * write cannot leave the delay before `delayMs` after it was sent. A read answered after that (a
 * stall on a busy machine) tells nothing, so a new key is tried, 3 times at most. Resolves the
 * key and when its write was sent.
 */
async function heldBack(
  write: (key: string) => Promise<unknown>,
  read: (key: string) => Promise<string | null>,
  keyOf: (attempt: number) => string,
  delayMs: number,
): Promise<{ key: string; sentAt: number }> {
  for (let attempt = 1; ; attempt += 1) {
    const key = keyOf(attempt);
    const sentAt = Date.now();
    await write(key);
    await sleep(Math.max(0, 200 - (Date.now() - sentAt)));
    const value = await read(key);
    if (Date.now() - sentAt < delayMs) {
      expect(value).toBeNull();
      return { key, sentAt };
    }
    if (attempt === 3) throw new Error(`3 reads on the replica came after the ${delayMs} ms delay`);
  }
}

describe('sentinel bed', () => {
  test('the replica lags the primary by the replication delay', async () => {
    // Long, so that "sooner than the delay" below still holds on a loaded machine.
    const delayMs = 5_000;
    const bed = await startSentinelBed({ replicationDelayMs: delayMs });
    const primary = new Redis(bed.primary.port);
    const replica = new Redis(bed.replicas[0]!.port);
    try {
      const lagging = await heldBack(
        (key) => primary.set(key, '1'),
        (key) => replica.get(key),
        (attempt) => `lagging-${attempt}`,
        delayMs,
      );
      // Without the delay from now on; what is held keeps its time and order (the sentinels'
      // hello messages are replicated too).
      bed.setReplicationDelay(0);
      // The write comes once its delay has passed (how soon after depends on the machine's load).
      await waitUntil(
        async () => (await replica.get(lagging.key)) === '1',
        'the write on the replica',
      );
      expect(Date.now() - lagging.sentAt).toBeGreaterThanOrEqual(delayMs);

      // Once what was held has drained, the stream is as quick as it is direct: a write arrives
      // sooner than the delay would have let it.
      const sentAt = Date.now();
      await primary.set('prompt', '1');
      await waitUntil(async () => (await replica.get('prompt')) === '1', 'the prompt write');
      expect(Date.now() - sentAt).toBeLessThan(delayMs);
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
      // The replica has it once the delay has passed (read from the replica itself).
      const replica = new Redis(bed.replicas.find((node) => node.shard === 0)!.server.port);
      let replicated: string;
      try {
        await replica.readonly();
        ({ key: replicated } = await heldBack(
          (written) => before.set(written, '1'),
          (written) => replica.get(written),
          (attempt) => `{${key}}replicated-${attempt}`,
          1_000,
        ));
        await waitUntil(
          async () => (await replica.get(replicated)) === '1',
          'the write on the replica',
        );
      } finally {
        replica.disconnect();
      }
      await before.set(`{${key}}in-flight`, '1');
      await bed.killMaster(0);
      const promoted = await bed.waitForPromotion(0);
      expect(promoted.port).toBe(bed.replicas.find((node) => node.shard === 0)!.port);

      after = new Cluster(bed.nodes);
      expect(await after.get(replicated)).toBe('1');
      expect(await after.get(`{${key}}in-flight`)).toBeNull();
      // A client that was connected through the failover finds the new master too.
      expect(await before.get(replicated)).toBe('1');
    } finally {
      before.disconnect();
      after?.disconnect();
      await bed.stop();
    }
  });
});
