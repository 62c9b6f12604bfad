// RedisTokenStore's fast paths against the derived steps they replace (core/derived-engine.ts,
// core/entry-begin.ts), on one Redis and the same keys: the same inputs give the same answers and
// leave the same values. Then the engine's contract, once, on Redis with every fast path on.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { newSessionKey, sampleRecord } from 'express-platform-login/testing';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import { deriveEngine, engineOf } from '../../lib/core/derived-engine';
import { beginEntry, ENTRY_BUDGET_WINDOW_MS } from '../../lib/core/entry-begin';
import { playerKeyOf } from '../../lib/core/player-key';
import { MAX_INDEXED_LOGINS, storeKeys } from '../../lib/core/store-keys';
import type { EntryBegin, LoginWrite, StoreEngine } from '../../lib/core/store-engine';
import type { RedisClient } from '../../lib/redis/redis-client';
import { useStoreClients } from '../helpers/bed';
import { storeEngineContract } from '../helpers/engine-contract';
import { withinLifetime } from '../helpers/within-lifetime';

const prefix = `fast-${randomUUID().slice(0, 8)}:`;
const WINDOW_MS = 60_000;
let redis: Redis;
let client: RedisClient;
useStoreClients(prefix, (clients) => ({ redis, client } = clients));

let store: RedisTokenStore;
/** The engine with the store's fast paths, and the same engine with none (every step derived). */
let fast: StoreEngine;
let derived: StoreEngine;
beforeAll(() => {
  store = new RedisTokenStore({ redis: client, prefix });
  fast = engineOf(store);
  derived = deriveEngine(store);
});
afterAll(() => store.close());

/** What Redis holds at store `key`: the value without its version, or null. */
async function valueAt(key: string): Promise<string | null> {
  const stored = await redis.get(prefix + key);
  return stored === null ? null : stored.slice(stored.indexOf('|') + 1);
}

describe("an entry's checks (BEGIN_ENTRY) answer as the derived steps do", () => {
  /** An entry of address `address` with code `code`, all keys under `run` (one per engine). */
  const entryOf = (run: string, address: string, code: string): EntryBegin => ({
    failureKey: `${run}:${address}`,
    failedKey: `${run}:${address}:failed`,
    failureLimit: 3,
    failureWindowMs: WINDOW_MS,
    holdKey: `${run}:hold`,
    holdVersion: 1,
    probeKey: `${run}:probe`,
    probeTtlMs: 5_000,
    budgetKey: `${run}:budget`,
    budgetPerSecond: 1,
    claimKey: `${run}:${code}`,
    claimTtlMs: WINDOW_MS,
  });
  /** The answer without the milliseconds to wait, which are checked to lie within their window. */
  const shape = (answer: Awaited<ReturnType<typeof beginEntry>>) => {
    const { stopped, ...rest } = answer;
    if (stopped !== undefined) {
      expect(stopped.retryInMs).toBeGreaterThan(0);
      expect(stopped.retryInMs).toBeLessThanOrEqual(WINDOW_MS);
    }
    return { stopped: stopped?.reason, ...rest };
  };

  /**
   * Plays `steps` on each engine under its own keys and expects the same answers, and the same
   * values left at each key the steps touched (read right after each engine's steps).
   */
  async function sameOnBoth(
    steps: (engine: StoreEngine, run: string) => Promise<unknown[]>,
    keysOf: (run: string) => string[],
  ): Promise<void> {
    expect(fast.entries).toBeDefined();
    expect(derived.entries).toBeUndefined();
    const play = async (engine: StoreEngine, run: string) => {
      const answers = await steps(engine, run);
      return { answers, left: await Promise.all(keysOf(run).map(valueAt)) };
    };
    // Each engine's play within the entry budget's window: one a busy machine stalled past it
    // may answer otherwise.
    const onFast = await withinLifetime(ENTRY_BUDGET_WINDOW_MS, () =>
      play(fast, `f-${randomUUID()}`),
    );
    const onDerived = await withinLifetime(ENTRY_BUDGET_WINDOW_MS, () =>
      play(derived, `d-${randomUUID()}`),
    );
    expect(onDerived.answers).toEqual(onFast.answers);
    expect(onDerived.left).toEqual(onFast.left);
  }
  const counterKeys = (run: string) =>
    ['a', 'a:failed', 'budget'].map((key) => storeKeys.counter(`${run}:${key}`));

  test('a clean address: reserved, claimed once, the login generation read', async () => {
    await sameOnBoth(
      async (engine, run) => [
        shape(await beginEntry(engine, entryOf(run, 'a', 'code-1'))),
        shape(await beginEntry(engine, entryOf(run, 'a', 'code-1'))),
        shape(await beginEntry(engine, entryOf(run, 'a', 'code-2'))),
        shape(await beginEntry(engine, entryOf(run, 'a', 'code-3'))),
      ],
      (run) => [...counterKeys(run), storeKeys.claim(`${run}:code-1`)],
    );
  });

  test('an address with a failure: the budget of exchanges, then its limit', async () => {
    await sameOnBoth(async (engine, run) => {
      await engine.counters.countInWindow(`${run}:a:failed`, 1, WINDOW_MS);
      await engine.counters.countInWindow(`${run}:a`, 1, WINDOW_MS);
      return [
        shape(await beginEntry(engine, entryOf(run, 'a', 'code-1'))),
        shape(await beginEntry(engine, entryOf(run, 'a', 'code-2'))),
        // The limit: one failure and the reservations reach it.
        (await engine.counters.countInWindow(`${run}:a`, 1, WINDOW_MS)).count,
        shape(await beginEntry(engine, entryOf(run, 'a', 'code-3'))),
      ];
    }, counterKeys);
  });

  test('exchanges held: a clean address probes once, an address with a failure waits', async () => {
    await sameOnBoth(
      async (engine, run) => {
        await engine.locks.hold(`${run}:hold`, 1, WINDOW_MS);
        await engine.counters.countInWindow(`${run}:b:failed`, 1, WINDOW_MS);
        return [
          shape(await beginEntry(engine, entryOf(run, 'a', 'code-1'))),
          shape(await beginEntry(engine, entryOf(run, 'a', 'code-2'))),
          shape(await beginEntry(engine, entryOf(run, 'b', 'code-3'))),
        ];
      },
      (run) => [...counterKeys(run), storeKeys.claim(`${run}:probe`)],
    );
  });

  test('without a failure limit: only the hold and the claim', async () => {
    await sameOnBoth(
      async (engine, run) => {
        const entry = {
          ...entryOf(run, 'a', 'code-1'),
          failureKey: undefined,
          failedKey: undefined,
        };
        return [shape(await beginEntry(engine, entry)), shape(await beginEntry(engine, entry))];
      },
      (run) => [storeKeys.claim(`${run}:code-1`)],
    );
  });
});

describe("a new login's writes (PUT_NEW_LOGIN) answer as the derived put and give-back do", () => {
  /** The login as the entry makes it: one script with the fast path, else the put and give-back. */
  async function logIn(engine: StoreEngine, write: LoginWrite): Promise<boolean> {
    if (engine.logins !== undefined) return engine.logins.put(write);
    const { sessionKey, record, ttlMs, loginGeneration, giveBack } = write;
    const written = await engine.records.put(sessionKey, record, {
      expectedVersion: null,
      ttlMs,
      loginGeneration,
    });
    if (written && giveBack !== undefined)
      await engine.counters.countInWindow(giveBack.key, -1, giveBack.windowMs);
    return written;
  }

  test('written once per session, refused after a log-out everywhere it did not see, with the same record, index and counts', async () => {
    const outcomes: Array<{
      answers: boolean[];
      record: unknown;
      index: string[];
      count: unknown;
    }> = [];
    for (const engine of [fast, derived]) {
      const record = sampleRecord(1, { openId: `fast-${randomUUID()}` });
      const [sessionKey, other, late] = [newSessionKey(), newSessionKey(), newSessionKey()];
      const counter = `login-${randomUUID()}`;
      await engine.counters.countInWindow(counter, 1, WINDOW_MS);
      await engine.counters.countInWindow(counter, 1, WINDOW_MS);
      const giveBack = { key: counter, windowMs: WINDOW_MS };
      const generation = await engine.records.loginGeneration();
      const write = (key: string, loginGeneration = generation): LoginWrite => ({
        sessionKey: key,
        record,
        ttlMs: WINDOW_MS,
        loginGeneration,
        giveBack,
        session: undefined,
      });
      const answers = [
        await logIn(engine, write(sessionKey)),
        await logIn(engine, write(sessionKey)),
      ];
      await engine.records.deletePlayer(playerKeyOf(record));
      // An entry that read the generation before the log-out is refused; one after it is kept.
      answers.push(await logIn(engine, write(other)));
      answers.push(await logIn(engine, write(late, await engine.records.loginGeneration())));
      const read = await engine.records.get(late);
      const index = JSON.parse((await valueAt(storeKeys.player(playerKeyOf(record))))!) as object;
      outcomes.push({
        answers,
        record: read.status === 'found' && read.record.accessToken === record.accessToken,
        index: Object.keys(index).map((key) => (key === late ? 'late' : key)),
        count: await engine.counters.countInWindow(counter, 0, WINDOW_MS).then((c) => c.count),
      });
      expect(await engine.records.get(other)).toEqual({ status: 'absent' });
    }
    expect(outcomes[0]!.answers).toEqual([true, false, false, true]);
    expect(outcomes[1]).toEqual(outcomes[0]);
  });

  test(`a login beyond the index's ${MAX_INDEXED_LOGINS} ends the same oldest login on both paths`, async () => {
    const outcomes: Array<{ ended: boolean[]; listed: number }> = [];
    for (const engine of [fast, derived]) {
      const record = sampleRecord(1, { openId: `fast-${randomUUID()}` });
      const generation = await engine.records.loginGeneration();
      const sessionKeys = Array.from({ length: MAX_INDEXED_LOGINS + 2 }, () => newSessionKey());
      for (const [at, sessionKey] of sessionKeys.entries())
        await logIn(engine, {
          ...{ sessionKey, record, ttlMs: WINDOW_MS + at * 10, loginGeneration: generation },
          ...{ giveBack: undefined, session: undefined },
        });
      const reads = await Promise.all(sessionKeys.map((key) => engine.records.get(key)));
      outcomes.push({
        ended: reads.map((read) => read.status === 'absent'),
        listed: (await engine.records.loginsOf(playerKeyOf(record))).length,
      });
    }
    expect(outcomes[0]!.ended.slice(0, 3)).toEqual([true, true, false]);
    expect(outcomes[0]!.ended.filter(Boolean)).toHaveLength(2);
    expect(outcomes[0]!.listed).toBe(MAX_INDEXED_LOGINS);
    expect(outcomes[1]).toEqual(outcomes[0]);
  });
});

describe('the engine on Redis, with every fast path', () => {
  storeEngineContract(() => fast);
});
