// RedisTokenStore when Redis is in trouble, on a private redis-server (never the shared one): frozen
// with SIGSTOP, and killed then restarted on the same port. Calls fail with StoreUnavailableError
// within the bound and work again by themselves. The client (ioredis, or node-redis in the
// `node-redis` projects) keeps its library's defaults on purpose (offline queue, retries, no command
// timeout): the store's deadline alone bounds it.
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '../../lib/redis/redis-client';
import { storeClientKind } from '../helpers/redis-clients';
import { StoreUnavailableError } from '../../lib/errors';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { newSessionKey, sampleRecord } from 'express-platform-login/testing';
import { recordAt } from '../helpers/records';
import type { TokenRecord } from '../../lib/core/token-record';
import { engineOf } from '../../lib/core/derived-engine';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';

const OPERATION_TIMEOUT_MS = 1000;
/** The behaviour under test: an answer within about 1–2 s, never a hang. */
const BOUND_MS = 2500 + LOAD_ALLOWANCE_MS;

let server: TestRedisServer;
const kind = storeClientKind();
let redis: RedisClient;
let store: RedisTokenStore;
let restarted: TestRedisServer | undefined;

beforeAll(async () => {
  server = await startRedisServer();
  redis = await kind.connect({ port: server.port, libraryDefaults: true });
  store = new RedisTokenStore({ redis, operationTimeoutMs: OPERATION_TIMEOUT_MS });
});

afterAll(async () => {
  server.resume();
  await store.close();
  await kind.quit(redis);
  await server.stop();
  await restarted?.stop();
});

/** Runs every kind of store call at once; resolves their outcomes and how long the slowest took. */
async function everyCall(): Promise<{
  outcomes: PromiseSettledResult<unknown>[];
  elapsedMs: number;
}> {
  const sessionId = newSessionKey();
  const started = Date.now();
  const outcomes = await Promise.allSettled([
    engineOf(store).records.get(sessionId),
    engineOf(store).records.put(sessionId, sampleRecord(1), {
      expectedVersion: null,
      ttlMs: 60_000,
    }),
    engineOf(store).records.delete(sessionId),
    engineOf(store).records.delete(sessionId, { expectedVersion: 1 }),
    engineOf(store).locks.acquire(sessionId, 5000),
    engineOf(store).locks.release(sessionId, 'owner'),
    engineOf(store).counters.claimOnce(`code:${sessionId}`, 60_000),
  ]);
  return { outcomes, elapsedMs: Date.now() - started };
}

function expectAllUnavailable(outcomes: PromiseSettledResult<unknown>[]): void {
  for (const outcome of outcomes) {
    expect(outcome.status).toBe('rejected');
    const reason = (outcome as PromiseRejectedResult).reason as unknown;
    expect(reason).toBeInstanceOf(StoreUnavailableError);
    expect(reason).toMatchObject({ status: 503, error: 'store_unavailable' });
  }
}

/**
 * Retries a write-then-read round trip until Redis answers again (reconnection takes a moment);
 * resolves what was written and what was read back, for the test to compare.
 */
async function roundTripWhenBack(
  timeoutMs: number,
): Promise<{ written: TokenRecord; read: TokenRecord | undefined }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sessionId = newSessionKey();
    const record = sampleRecord(1);
    try {
      expect(
        await engineOf(store).records.put(sessionId, record, {
          expectedVersion: null,
          ttlMs: 60_000,
        }),
      ).toBe(true);
      return { written: record, read: await recordAt(store, sessionId) };
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || Date.now() > deadline) throw error;
      await sleep(100);
    }
  }
}

test('works while Redis is healthy', async () => {
  const { written, read } = await roundTripWhenBack(5000);
  expect(read).toEqual(written);
});

test('Redis frozen (SIGSTOP): every call fails with store_unavailable within the bound', async () => {
  server.pause();
  try {
    const { outcomes, elapsedMs } = await everyCall();
    expectAllUnavailable(outcomes);
    expect(elapsedMs).toBeLessThan(BOUND_MS);
  } finally {
    server.resume();
  }
});

test('after SIGCONT the store works again by itself', async () => {
  const sessionId = newSessionKey();
  const record = sampleRecord(1);
  expect(
    await engineOf(store).records.put(sessionId, record, { expectedVersion: null, ttlMs: 60_000 }),
  ).toBe(true);
  expect(await recordAt(store, sessionId)).toEqual(record);
});

test('Redis killed: calls fail within the bound; restarted on the same port: works again', async () => {
  const { port } = server;
  await server.kill();
  const { outcomes, elapsedMs } = await everyCall();
  expectAllUnavailable(outcomes);
  expect(elapsedMs).toBeLessThan(BOUND_MS);

  restarted = await startRedisServer([], { port });
  const { written, read } = await roundTripWhenBack(10_000);
  expect(read).toEqual(written);
  // The commands that were waiting when Redis died settle late; give them the time to do so
  // inside this test, where Jest would report any of them as an unhandled rejection.
  await sleep(300);
});
