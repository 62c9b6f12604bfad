// What RedisTokenStore keeps through a failover (durability/), on a scripted replica link:
// a refreshed record whose wait failed is served to this process and written back once a primary
// answers; a refresh of that kept record chains onto it; refresh locks wait only after a sign that
// the server changed where the primary has a replica; a logout is answered only once a replica
// holds it; and nothing kept here outlives a deletion.
import { StoreDurability } from '../../lib/durability/store-durability';
import { SETTLE_MS, UNSETTLED_MS } from '../../lib/durability/windows';
import type { ReplicaWaitOutcome } from '../../lib/durability/replica-acks';
import type { RedisCommands } from '../../lib/redis/commands';
import type { ReplicaLink } from '../../lib/redis/replica-lanes';
import { StoreUnavailableError } from '../../lib/errors';
import type { StoredValue } from '../../lib/core/token-store';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

/** One stored record per version, the same at every call. */
const records = new Map<number, StoredValue>();
const recordAt = (version: number): StoredValue => {
  if (!records.has(version))
    records.set(
      version,
      Object.freeze({ value: `record ${version}`, version, expiresAt: T0 + HOUR }),
    );
  return records.get(version)!;
};

/** How the next wait for a replica ends; `held`: the test answers it (see `answers`). */
type Answer = ReplicaWaitOutcome | 'held';

function durability(script: Answer[], topology: RedisCommands['topology'] = 'sentinel') {
  const writes: Array<{ version: number; over: number }> = [];
  const redeletes: string[] = [];
  const reasserts: string[] = [];
  const answers: Array<(acknowledged: number) => void> = [];
  const signs: Array<() => void> = [];
  let primary: 'down' | 'up' = 'down';
  let round: Answer = 'acknowledged';
  const link: ReplicaLink = {
    routeOf: () => '',
    replicas: async () => {
      round = script.shift() ?? 'acknowledged';
      if (round === 'failed') throw new Error('connection lost');
      return round === 'no-replica' ? 0 : 1;
    },
    confirm: () =>
      round === 'held'
        ? new Promise<number>((resolve) => answers.push(resolve))
        : Promise.resolve(round === 'timeout' ? 0 : 1),
    close: () => undefined,
  };
  const redis = {
    topology,
    onServerChange: (listener: () => void) => {
      signs.push(listener);
      return () => undefined;
    },
  } as unknown as RedisCommands;
  const store = new StoreDurability({
    redis,
    link,
    settings: { replicas: 1, timeoutMs: 1000 },
    reassert: async (_key, record, replaced) => {
      if (primary === 'down') throw new Error('connection lost');
      writes.push({ version: record.version, over: replaced });
      return 1;
    },
    redelete: async (sessionKey) => {
      if (primary === 'down') throw new Error('connection lost');
      redeletes.push(sessionKey);
    },
    markKey: (key) => `{${key}}:w`,
    recordKey: (sessionKey) => `t:${sessionKey}`,
    playerKey: (player) => `p:${player}`,
    maxTtlMs: HOUR,
    holds: async () => primary === 'up',
    sessionRedisKey: () => undefined,
    onWait: () => undefined,
    onReassert: (outcome) => reasserts.push(outcome),
  });
  return {
    store,
    writes,
    redeletes,
    reasserts,
    answers,
    primaryUp: () => (primary = 'up'),
    reconnected: () => signs.forEach((sign) => sign()),
  };
}

/** A refresh's write of version `version` over `expected`, as the store makes it. */
const refresh = (
  store: StoreDurability,
  version: number,
  expected = version - 1,
  write = async () => true,
) => store.refreshed('s', recordAt(version), expected, HOUR, write);

const found = recordAt;

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

test('a refreshed record whose wait failed is served here and written back, over what it replaced, once a primary answers', async () => {
  const { store, writes, reasserts, primaryUp } = durability(['failed']);
  await refresh(store, 2);
  await store.engine.settled('s');
  // The new primary still has version 1: this process goes on with version 2.
  expect(store.overlay('s', found(1))).toEqual(found(2));
  await jest.advanceTimersByTimeAsync(500);
  expect(writes).toEqual([]);
  primaryUp();
  await jest.advanceTimersByTimeAsync(200);
  expect(writes).toEqual([{ version: 2, over: 1 }]);
  expect(reasserts).toEqual(['written']);
  // Settled: reads are Redis's again.
  expect(store.overlay('s', found(3))).toEqual(found(3));
});

test('a kept record refreshed again chains: the next write goes over the oldest version it replaced', async () => {
  const { store, writes, primaryUp } = durability(['failed']);
  await refresh(store, 2);
  await store.engine.settled('s');
  primaryUp();
  const own = jest.fn(async () => true);
  expect(await refresh(store, 3, 2, own)).toBe(true);
  expect(own).not.toHaveBeenCalled();
  expect(writes).toEqual([{ version: 3, over: 1 }]);
});

test('after a sign that the server changed, locks wait for SETTLE_MS and a refused refresh token re-reads until UNSETTLED_MS', async () => {
  const { store, reconnected } = durability([]);
  await store.engine.loggedOut([], 'x'); // ROLE: the primary has a replica
  expect([store.settling, store.engine.unsettled]).toEqual([false, false]);
  reconnected();
  expect([store.settling, store.engine.unsettled]).toEqual([true, true]);
  await jest.advanceTimersByTimeAsync(SETTLE_MS);
  expect([store.settling, store.engine.unsettled]).toEqual([false, true]);
  await jest.advanceTimersByTimeAsync(UNSETTLED_MS - SETTLE_MS);
  expect([store.settling, store.engine.unsettled]).toEqual([false, false]);
});

test('where the primary has no replica, no sign holds refresh locks back: no failover can lose a write', async () => {
  const { store, reconnected } = durability(['no-replica'], 'standalone');
  await store.engine.loggedOut([], 'x'); // ROLE: no replica
  reconnected();
  expect([store.settling, store.engine.unsettled]).toEqual([false, false]);
});

test('an acknowledged write the primary holds keeps nothing and holds no lock back', async () => {
  const { store, primaryUp } = durability(['acknowledged']);
  primaryUp();
  await refresh(store, 2);
  await store.engine.settled('s');
  expect(store.overlay('s', found(1))).toEqual(found(1));
  expect(store.settling).toBe(false);
});

test('a wait answered by a promoted replica that lacks the write is a failed one: the record is kept', async () => {
  // The new primary has no replica ("no-replica") and no record at version 2; the old one had one.
  const { store } = durability(['acknowledged', 'no-replica']);
  await store.engine.loggedOut([], 'x');
  await jest.advanceTimersByTimeAsync(2000);
  await refresh(store, 2);
  await store.engine.settled('s');
  expect(store.overlay('s', found(1))).toEqual(found(2));
  expect(store.settling).toBe(true);
});

test('a timed-out wait keeps the record until a replica holds it, without holding locks back', async () => {
  const { store, writes, primaryUp } = durability(['timeout']);
  primaryUp();
  await refresh(store, 2);
  await store.engine.settled('s');
  expect(store.settling).toBe(false);
  await jest.advanceTimersByTimeAsync(200);
  expect(writes).toEqual([{ version: 2, over: 1 }]);
});

test('a new login whose wait timed out is answered only if the server that answers now holds it', async () => {
  // Its lane opened after a failover: the WAIT ran on the promoted replica, which lacks the login.
  const promoted = durability(['timeout']);
  await expect(promoted.store.engine.confirm('s')).rejects.toBeInstanceOf(StoreUnavailableError);
  const lagging = durability(['timeout']);
  lagging.primaryUp();
  await expect(lagging.store.engine.confirm('s')).resolves.toBeUndefined();
});

test('while its wait runs, a refreshed record is served here and not written again; settled() tells when the wait ends', async () => {
  const { store, answers, writes, primaryUp } = durability(['held']);
  primaryUp();
  await refresh(store, 2);
  let settled = false;
  void store.engine.settled('s').then(() => (settled = true));
  // A read that comes back with the replaced version (a promoted replica) gets the new record.
  expect(store.overlay('s', found(1))).toEqual(found(2));
  await jest.advanceTimersByTimeAsync(500);
  expect([settled, writes]).toEqual([false, []]);
  answers[0]!(1);
  await jest.advanceTimersByTimeAsync(1);
  expect(settled).toBe(true);
  // Nothing waits any more: settled() answers at once.
  await expect(store.engine.settled('s')).resolves.toBeUndefined();
});

test('a kept record never wins over an absence: a deletion is newer than anything kept', async () => {
  const { store, primaryUp } = durability(['timeout']);
  primaryUp();
  await refresh(store, 2);
  await store.engine.settled('s');
  expect(store.overlay('s', found(1))).toEqual(found(2));
  // Another process logged the player out (acknowledged by a replica): nothing here brings it back.
  expect(store.overlay('s', undefined)).toBeUndefined();
});

test('a logout no replica acknowledged is refused with StoreUnavailableError, and its deletion done again until one does', async () => {
  const { store, redeletes, primaryUp } = durability(['timeout', 'acknowledged']);
  primaryUp();
  await expect(store.engine.loggedOut(['s'])).rejects.toBeInstanceOf(StoreUnavailableError);
  // Meanwhile this process reads the record as deleted, whatever a new primary holds.
  expect(store.overlay('s', found(1))).toBeUndefined();
  await jest.advanceTimersByTimeAsync(200);
  expect(redeletes).toEqual(['s']);
  expect(store.overlay('s', found(1))).toEqual(found(1));
  // Asked again, with nothing left to delete: answered once a replica holds the earlier writes.
  await expect(store.engine.loggedOut([], 'p')).resolves.toBeUndefined();
});

test('a later write of the same session decides: the earlier wait ending unacknowledged keeps nothing of the older record', async () => {
  const { store, answers, primaryUp } = durability(['held', 'held']);
  primaryUp();
  await refresh(store, 2);
  await refresh(store, 3, 2);
  answers[0]!(0);
  await jest.advanceTimersByTimeAsync(1);
  expect(store.overlay('s', found(1))).toEqual(found(3));
  answers[1]!(1);
  await jest.advanceTimersByTimeAsync(1);
  // Acknowledged: nothing is kept, reads are Redis's again.
  expect(store.overlay('s', found(1))).toEqual(found(1));
});
