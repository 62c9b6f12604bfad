// What RedisTokenStore keeps through a failover (stores/durable-writes.ts), on scripted waits and
// writes: a refreshed record whose wait failed is served to this process and written back once a
// primary answers; a refresh of that kept record chains onto it; locks wait while the server settles.
import { DurableWrites, SETTLE_MS } from '../../lib/stores/durable-writes';
import type { ReplicaAcks, ReplicaWaitOutcome } from '../../lib/stores/replica-acks';
import { sampleRecord } from '../../lib/testing/samples';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

function durableWrites(outcomes: ReplicaWaitOutcome[]) {
  const writes: Array<{ version: number; over: number }> = [];
  let primary: 'down' | 'up' = 'down';
  const settled: string[] = [];
  const durable = new DurableWrites({
    acks: { confirm: async () => outcomes.shift() ?? 'acknowledged' } as unknown as ReplicaAcks,
    reassert: async (_key, record, replaced) => {
      if (primary === 'down') throw new Error('connection lost');
      writes.push({ version: record.version, over: replaced });
      return 1;
    },
    redelete: async () => undefined,
    markKey: (key) => `{${key}}:w`,
    recordKey: (sessionKey) => `{${sessionKey}}:t`,
    holds: async () => primary === 'up',
    followsFailovers: true,
    onReassert: (outcome) => settled.push(outcome),
  });
  return { durable, writes, settled, primaryUp: () => (primary = 'up') };
}

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

test('a refreshed record whose wait failed is served here and written back, over what it replaced, once a primary answers', async () => {
  const { durable, writes, settled, primaryUp } = durableWrites(['failed']);
  const second = sampleRecord(2);
  await durable.recordWritten('s', second, 1, HOUR);
  // The new primary still has version 1: this process goes on with version 2.
  expect(durable.overlay('s', { status: 'found', record: sampleRecord(1) })).toEqual({
    status: 'found',
    record: second,
  });
  await jest.advanceTimersByTimeAsync(500);
  expect(writes).toEqual([]);
  primaryUp();
  await jest.advanceTimersByTimeAsync(200);
  expect(writes).toEqual([{ version: 2, over: 1 }]);
  expect(settled).toEqual(['written']);
  // Settled: reads are Redis's again.
  const newer = sampleRecord(3);
  expect(durable.overlay('s', { status: 'found', record: newer })).toEqual({
    status: 'found',
    record: newer,
  });
});

test('a kept record refreshed again chains: the next write goes over the oldest version it replaced', async () => {
  const { durable } = durableWrites(['failed']);
  await durable.recordWritten('s', sampleRecord(2), 1, HOUR);
  expect(durable.writeOver('s', 2)).toEqual({ replaced: 1, chained: true });
  expect(durable.writeOver('s', 5)).toEqual({ replaced: 5, chained: false });
  expect(durable.writeOver('other', 2)).toEqual({ replaced: 2, chained: false });
});

test('after the server was lost, locks wait for SETTLE_MS; a refused refresh token re-reads for longer', async () => {
  const { durable } = durableWrites([]);
  expect(durable.settling).toBe(false);
  durable.lost();
  expect([durable.settling, durable.unsettled]).toEqual([true, true]);
  await jest.advanceTimersByTimeAsync(SETTLE_MS);
  expect([durable.settling, durable.unsettled]).toEqual([false, true]);
});

test('an acknowledged write the primary holds keeps nothing', async () => {
  const { durable, primaryUp } = durableWrites(['acknowledged']);
  primaryUp();
  await durable.recordWritten('s', sampleRecord(2), 1, HOUR);
  const stored = sampleRecord(1);
  expect(durable.overlay('s', { status: 'found', record: stored })).toEqual({
    status: 'found',
    record: stored,
  });
  expect(durable.settling).toBe(false);
});

test('a wait answered by a promoted replica that lacks the write is a failed one: the record is kept', async () => {
  // The new primary has no replica ("no-replica") and no record at version 2.
  const { durable } = durableWrites(['no-replica']);
  const second = sampleRecord(2);
  await durable.recordWritten('s', second, 1, HOUR);
  expect(durable.overlay('s', { status: 'found', record: sampleRecord(1) })).toEqual({
    status: 'found',
    record: second,
  });
  expect(durable.settling).toBe(true);
});

test('a timed-out wait keeps the record until a replica holds it, without holding locks back', async () => {
  const { durable, writes, primaryUp } = durableWrites(['timeout']);
  primaryUp();
  await durable.recordWritten('s', sampleRecord(2), 1, HOUR);
  expect(durable.settling).toBe(false);
  await jest.advanceTimersByTimeAsync(200);
  expect(writes).toEqual([{ version: 2, over: 1 }]);
});

/** Durable writes whose waits for a replica the test answers, in order; the primary answers. */
function waitsAnsweredByTest() {
  const answers: Array<(outcome: ReplicaWaitOutcome) => void> = [];
  const writes: number[] = [];
  const durable = new DurableWrites({
    acks: {
      confirm: () => new Promise<ReplicaWaitOutcome>((resolve) => answers.push(resolve)),
    } as unknown as ReplicaAcks,
    reassert: async (_key, record) => {
      writes.push(record.version);
      return 1;
    },
    redelete: async () => undefined,
    markKey: (key) => `{${key}}:w`,
    recordKey: (sessionKey) => `{${sessionKey}}:t`,
    holds: async () => true,
    followsFailovers: false,
    onReassert: () => undefined,
  });
  return { durable, answers, writes };
}

test('while its wait runs, a refreshed record is served here and not written again; settled() tells when the wait ends', async () => {
  const { durable, answers, writes } = waitsAnsweredByTest();
  const second = sampleRecord(2);
  void durable.recordWritten('s', second, 1, HOUR);
  let settled = false;
  void durable.settled('s').then(() => (settled = true));
  // A read that comes back with the replaced version (a promoted replica) gets the new record.
  expect(durable.overlay('s', { status: 'found', record: sampleRecord(1) })).toEqual({
    status: 'found',
    record: second,
  });
  await jest.advanceTimersByTimeAsync(1000);
  expect([settled, writes]).toEqual([false, []]);
  answers[0]!('acknowledged');
  await jest.advanceTimersByTimeAsync(1);
  expect(settled).toBe(true);
  expect(durable.overlay('s', { status: 'absent' })).toEqual({ status: 'absent' });
  // Nothing waits any more: settled() answers at once.
  await expect(durable.settled('s')).resolves.toBeUndefined();
});

test('a later write of the same session decides: the earlier wait failing keeps nothing of the older record', async () => {
  const { durable, answers } = waitsAnsweredByTest();
  const second = sampleRecord(2);
  const third = sampleRecord(3);
  void durable.recordWritten('s', second, 1, HOUR);
  void durable.recordWritten('s', third, 1, HOUR);
  answers[0]!('failed');
  await jest.advanceTimersByTimeAsync(1);
  expect(durable.overlay('s', { status: 'found', record: sampleRecord(1) })).toEqual({
    status: 'found',
    record: third,
  });
  answers[1]!('acknowledged');
  await jest.advanceTimersByTimeAsync(1);
  // Acknowledged: nothing is kept, reads are Redis's again.
  const stored = sampleRecord(1);
  expect(durable.overlay('s', { status: 'found', record: stored })).toEqual({
    status: 'found',
    record: stored,
  });
});
