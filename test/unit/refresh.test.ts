// The refresh coordinator (core/refresh.ts) on its own: a memory store shared by two coordinators
// (two processes), a scripted token client whose answers the test releases, and Jest's fake clock
// (Date.now and every timer, the store's expiry included), so each race is played out step by step
// and every run is the same.
import { engineOf } from '../../lib/core/derived-engine';
import { EventEmitter } from 'node:events';
import { RefreshCoordinator } from '../../lib/core/refresh';
import { lockWaitDeadlineMs, type RefreshSettings } from '../../lib/core/refresh-options';
import type { ReceivedTokens, TokenRecord } from '../../lib/core/token-record';
import type { StoreEngine } from '../../lib/core/store-engine';
import { LoginRequiredError, PlatformError, tokenEndpointRefused } from '../../lib/errors';
import type { LockWaitOutcome, PlatformLoginEvents } from '../../lib/observability/events';
import { MemoryTokenStore } from '../../lib/core/memory-store';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const KEY = 'session-key-1';
const MAX_REFRESH_MS = 4_000;
const LOCK_TTL_MS = 5_000;

const settings: RefreshSettings = {
  refreshTokenLifetimeMs: 90 * 24 * HOUR,
  maxRefreshMs: MAX_REFRESH_MS,
  lockTtlMs: LOCK_TTL_MS,
  lockWaitDeadlineMs: lockWaitDeadlineMs(MAX_REFRESH_MS, LOCK_TTL_MS),
  retryAfterSeconds: 5,
  failureCooldownMs: 2_000,
  sessionTtlMs: 24 * HOUR,
  freshness: { refreshSkewMs: 60_000, refreshAheadFraction: 0.5 },
};

/** A platform call the test answers when it chooses. */
interface Call {
  refreshToken: string;
  answer(tokens: ReceivedTokens): void;
  fail(error: unknown): void;
}

/** The token client: each refresh waits for the test to answer it. */
class ScriptedClient {
  readonly calls: Call[] = [];
  refresh(refreshToken: string): Promise<ReceivedTokens> {
    return new Promise((resolve, reject) => {
      this.calls.push({ refreshToken, answer: resolve, fail: reject });
    });
  }
}

const tokens = (accessToken: string, refreshToken?: string): ReceivedTokens => ({
  accessToken,
  ...(refreshToken === undefined ? {} : { refreshToken }),
  expiresIn: 7200,
  expiresAt: Date.now() + 7200 * 1000,
  openId: 'player-ada',
  scope: ['user_info'],
});

const invalidGrant = (): PlatformError =>
  tokenEndpointRefused({ oauthError: 'invalid_grant', httpStatus: 400, grant: 'refresh_token' });

/** An expired record (version 1), as the middleware would have read it. */
function expiredRecord(): TokenRecord {
  return {
    accessToken: 'at-1',
    refreshToken: 'rt-1',
    accessExpiresAt: Date.now() - 1000,
    refreshExpiresAt: Date.now() + 80 * 24 * HOUR,
    openId: 'player-ada',
    scope: ['user_info'],
    version: 1,
    obtainedAt: Date.now() - 2 * HOUR - 1000,
  };
}

interface Process {
  coordinator: RefreshCoordinator;
  events: EventEmitter<PlatformLoginEvents>;
  waits: LockWaitOutcome[];
}

/** One "process": its own coordinator and events over the shared store (or a view of it). */
function process_(given: StoreEngine | MemoryTokenStore, client: ScriptedClient): Process {
  const store = given instanceof MemoryTokenStore ? engineOf(given) : given;
  const events = new EventEmitter<PlatformLoginEvents>();
  const waits: LockWaitOutcome[] = [];
  const coordinator = new RefreshCoordinator(store, client, settings, events, (_ms, outcome) =>
    waits.push(outcome),
  );
  return { coordinator, events, waits };
}

/** The promise's outcome so far, without waiting for it. */
function settled<T>(promise: Promise<T>): () => { value?: T; error?: unknown; done: boolean } {
  const state: { value?: T; error?: unknown; done: boolean } = { done: false };
  promise.then(
    (value) => Object.assign(state, { value, done: true }),
    (error: unknown) => Object.assign(state, { error, done: true }),
  );
  return () => state;
}

let store: MemoryTokenStore;
let client: ScriptedClient;
let seen: TokenRecord;

beforeEach(async () => {
  jest.useFakeTimers({ now: T0 });
  store = new MemoryTokenStore();
  client = new ScriptedClient();
  seen = expiredRecord();
  await engineOf(store).records.put(KEY, seen, { expectedVersion: null, ttlMs: 24 * HOUR });
});
afterEach(() => {
  jest.useRealTimers();
});

const stored = async (): Promise<TokenRecord | undefined> => {
  const read = await engineOf(store).records.get(KEY);
  return read.status === 'found' ? read.record : undefined;
};

test('the lock-wait deadline is one figure: the slowest refresh, a dead holder’s lock, and a second', () => {
  expect(lockWaitDeadlineMs(MAX_REFRESH_MS, LOCK_TTL_MS)).toBe(4_000 + 5_000 + 1_000);
});

test('two processes, one refresh: the waiter is told of the holder’s write and takes its rotated record', async () => {
  const [a, b] = [process_(store, client), process_(store, client)];
  const refreshed: string[] = [];
  a.events.on('refresh', (e) => refreshed.push(`${e.sessionHash} ${e.renewed}`));
  const first = settled(a.coordinator.refresh(KEY, seen));
  const second = settled(b.coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(100);
  expect(client.calls).toHaveLength(1);
  expect(client.calls[0]!.refreshToken).toBe('rt-1');

  client.calls[0]!.answer(tokens('at-2', 'rt-2'));
  // The waiter wakes on the store's change notice, well before its 250 ms re-read.
  await jest.advanceTimersByTimeAsync(1);
  expect(first()).toMatchObject({ done: true, value: { version: 2, accessToken: 'at-2' } });
  expect(second()).toMatchObject({ done: true, value: { version: 2, accessToken: 'at-2' } });
  const record = (await stored())!;
  expect(record.refreshToken).toBe('rt-2');
  // A new refresh token starts a new refresh lifetime.
  expect(record.refreshExpiresAt).toBe(Date.now() - 1 + settings.refreshTokenLifetimeMs);
  expect(client.calls).toHaveLength(1);
  expect(refreshed).toEqual([`${KEY} new-token`]);
  expect(b.waits).toEqual(['refreshed-elsewhere']);
});

test('a response without a refresh token keeps the old one and its expiry', async () => {
  const { coordinator } = process_(store, client);
  const result = settled(coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(1);
  client.calls[0]!.answer(tokens('at-2'));
  await jest.advanceTimersByTimeAsync(1);
  expect(result().value).toMatchObject({
    version: 2,
    accessToken: 'at-2',
    refreshToken: 'rt-1',
    refreshExpiresAt: seen.refreshExpiresAt,
  });
});

test('a waiter outlives a dead holder: once its lock expires, the waiter refreshes, not before', async () => {
  const dead = await engineOf(store).locks.acquire(KEY, LOCK_TTL_MS); // taken, then never renewed nor released
  expect(dead).toBeDefined();
  const b = process_(store, client);
  const result = settled(b.coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(LOCK_TTL_MS - 1);
  expect(client.calls).toHaveLength(0);
  expect(result().done).toBe(false);
  // The lock lapses; the waiter's next re-read (every 250 ms at most) finds it free.
  await jest.advanceTimersByTimeAsync(250);
  expect(client.calls).toHaveLength(1);
  client.calls[0]!.answer(tokens('at-2', 'rt-2'));
  await jest.advanceTimersByTimeAsync(1);
  expect(result()).toMatchObject({ done: true, value: { version: 2 } });
  expect(b.waits).toEqual(['took-over']);
});

test('lock expiry mid-refresh: the holder’s lock lapses (renewals fail), a waiter takes over; its invalid_grant waits for the first holder’s rotated record', async () => {
  // Process A cannot renew its lock (a stalled connection): it lapses while A's call is out.
  const stalled: StoreEngine = {
    records: engineOf(store).records,
    counters: engineOf(store).counters,
    changes: engineOf(store).changes,
    locks: { ...engineOf(store).locks, extend: async () => false },
  };
  const a = process_(stalled, client);
  const b = process_(store, client);
  const first = settled(a.coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(10);
  const second = settled(b.coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(LOCK_TTL_MS + 250);
  // B took the lapsed lock and called the platform with the same refresh token…
  expect(client.calls.map((call) => call.refreshToken)).toEqual(['rt-1', 'rt-1']);
  // …which A's call had already rotated: the platform refuses B's.
  client.calls[1]!.fail(invalidGrant());
  await jest.advanceTimersByTimeAsync(500);
  expect(second().done).toBe(false); // B waits for A's write instead of ending the login
  client.calls[0]!.answer(tokens('at-2', 'rt-2'));
  await jest.advanceTimersByTimeAsync(300);
  expect(first()).toMatchObject({ done: true, value: { version: 2, refreshToken: 'rt-2' } });
  expect(second()).toMatchObject({ done: true, value: { version: 2, refreshToken: 'rt-2' } });
  expect(await stored()).toMatchObject({ version: 2, refreshToken: 'rt-2' });
  expect(b.waits).toEqual(['took-over']);
});

test('invalid_grant with nobody else writing: reauth_required, the record is deleted, refreshFailed says so', async () => {
  const { coordinator, events } = process_(store, client);
  const failed: string[] = [];
  events.on('refreshFailed', (e) => failed.push(e.code));
  const result = settled(coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(1);
  client.calls[0]!.fail(invalidGrant());
  await jest.advanceTimersByTimeAsync(1);
  expect(result().error).toBeInstanceOf(LoginRequiredError);
  expect(result().error).toHaveProperty('code', 'ERR_PLATFORM_REAUTH_REQUIRED');
  expect(await stored()).toBeUndefined();
  expect(failed).toEqual(['ERR_PLATFORM_REAUTH_REQUIRED']);
});

test('a lost compare-and-set: a write by someone else during the platform call wins, and is what the refresh resolves', async () => {
  const { coordinator } = process_(store, client);
  const result = settled(coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(1);
  // A login (or another writer the lock does not guard) replaces the record meanwhile.
  const theirs = { ...expiredRecord(), accessToken: 'at-theirs', version: 2 };
  theirs.accessExpiresAt = Date.now() + HOUR;
  expect(await engineOf(store).records.put(KEY, theirs, { expectedVersion: 1, ttlMs: HOUR })).toBe(
    true,
  );
  client.calls[0]!.answer(tokens('at-mine', 'rt-mine'));
  await jest.advanceTimersByTimeAsync(1);
  expect(result()).toMatchObject({ done: true, value: { version: 2, accessToken: 'at-theirs' } });
  expect(await stored()).toMatchObject({ accessToken: 'at-theirs' });
});

test('a Retry-After hold: no process calls the platform while it lasts, each answers with the time left', async () => {
  const a = process_(store, client);
  const b = process_(store, client);
  const first = settled(a.coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(1);
  const throttled = tokenEndpointRefused({
    oauthError: 'slow_down',
    httpStatus: 429,
    grant: 'refresh_token',
    platformRetryAfterSeconds: 30,
  });
  client.calls[0]!.fail(throttled);
  await jest.advanceTimersByTimeAsync(1);
  expect(first().error).toBeInstanceOf(PlatformError);
  expect(first().error).toHaveProperty('code', 'ERR_PLATFORM_UNAVAILABLE');
  expect(first().error).toMatchObject({ retryAfterSeconds: 30 });
  expect(await engineOf(store).locks.heldMs(KEY, 1)).toBeGreaterThan(29_000);

  // Ten seconds on, the other process is held back too (from the store), without a call.
  await jest.advanceTimersByTimeAsync(10_000);
  const second = settled(b.coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(1);
  expect(second().error).toBeInstanceOf(PlatformError);
  expect(second().error).toHaveProperty('code', 'ERR_PLATFORM_UNAVAILABLE');
  expect(second().error).toMatchObject({ retryAfterSeconds: 20 });
  // …and so is the first, from its own memory.
  const again = settled(a.coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(1);
  expect(again().error).toMatchObject({ retryAfterSeconds: 20 });
  expect(client.calls).toHaveLength(1);

  // Once the hold is over, the platform is asked again.
  await jest.advanceTimersByTimeAsync(20_000);
  const later = settled(b.coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(1);
  expect(client.calls).toHaveLength(2);
  client.calls[1]!.answer(tokens('at-2', 'rt-2'));
  await jest.advanceTimersByTimeAsync(1);
  expect(later()).toMatchObject({ done: true, value: { version: 2 } });
});

test('a holder that lives but never answers: the waiter gives up at the lock-wait deadline, not before', async () => {
  const a = process_(store, client);
  const b = process_(store, client);
  settled(a.coordinator.refresh(KEY, seen)); // its call never returns; it keeps renewing its lock
  await jest.advanceTimersByTimeAsync(1);
  const waiting = settled(b.coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(settings.lockWaitDeadlineMs - 300);
  expect(waiting().done).toBe(false);
  await jest.advanceTimersByTimeAsync(600);
  expect(waiting().error).toBeInstanceOf(PlatformError);
  expect(waiting().error).toHaveProperty('code', 'ERR_PLATFORM_UNAVAILABLE');
  expect(b.waits).toEqual(['gave-up']);
  expect(client.calls).toHaveLength(1);
});

test('just after a failover, an invalid_grant waits for the record the refreshing process writes back instead of ending the login', async () => {
  // The store lost its server a moment ago (durability.unsettled): the promoted replica held
  // version 1, whose refresh token another process has already rotated and is writing back.
  const unsettled: StoreEngine = {
    ...engineOf(store),
    durability: {
      confirm: async () => undefined,
      settled: async () => undefined,
      loggedOut: async () => undefined,
      unsettled: true,
    },
  };
  const { coordinator } = process_(unsettled, client);
  const result = settled(coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(1);
  client.calls[0]!.fail(invalidGrant());
  await jest.advanceTimersByTimeAsync(300);
  expect(result().done).toBe(false);
  // The other process writes its rotated record back on the new primary.
  const rotated = { ...expiredRecord(), accessToken: 'at-2', refreshToken: 'rt-2', version: 2 };
  await engineOf(store).records.put(KEY, rotated, { expectedVersion: 1, ttlMs: HOUR });
  await jest.advanceTimersByTimeAsync(300);
  expect(result()).toMatchObject({ done: true, value: { version: 2, refreshToken: 'rt-2' } });
  expect(await stored()).toMatchObject({ version: 2 });
});

test('settled, the same invalid_grant ends the login at once', async () => {
  const settledStore: StoreEngine = {
    ...engineOf(store),
    durability: {
      confirm: async () => undefined,
      settled: async () => undefined,
      loggedOut: async () => undefined,
      unsettled: false,
    },
  };
  const { coordinator } = process_(settledStore, client);
  const result = settled(coordinator.refresh(KEY, seen));
  await jest.advanceTimersByTimeAsync(1);
  client.calls[0]!.fail(invalidGrant());
  await jest.advanceTimersByTimeAsync(1);
  expect(result().error).toHaveProperty('code', 'ERR_PLATFORM_REAUTH_REQUIRED');
});

test('a usable token goes on once the new record is written; only an expired one waits for a replica to hold it', async () => {
  // The store's wait for a replica (durability.settled) ends when the test says.
  let acknowledge = (): void => undefined;
  const acknowledged = new Promise<void>((resolve) => (acknowledge = resolve));
  const durable: StoreEngine = {
    ...engineOf(store),
    durability: {
      confirm: async () => undefined,
      settled: () => acknowledged,
      loggedOut: async () => undefined,
      unsettled: false,
    },
  };
  const { coordinator } = process_(durable, client);
  // 30 s left of a token refreshed 60 s ahead: usable, and due.
  const usable = { ...expiredRecord(), accessExpiresAt: Date.now() + 30_000 };
  const served = settled(coordinator.forRequest(KEY, usable));
  await jest.advanceTimersByTimeAsync(1);
  client.calls[0]!.answer(tokens('at-2', 'rt-2'));
  await jest.advanceTimersByTimeAsync(1);
  expect(served()).toMatchObject({ done: true, value: { version: 2, accessToken: 'at-2' } });
  // A request of the same process whose token has expired shares the refresh but waits for the replica.
  const expired = settled(coordinator.forRequest(KEY, expiredRecord()));
  await jest.advanceTimersByTimeAsync(500);
  expect(expired().done).toBe(false);
  acknowledge();
  await jest.advanceTimersByTimeAsync(1);
  expect(expired()).toMatchObject({ done: true, value: { version: 2 } });
  expect(client.calls).toHaveLength(1);
});
