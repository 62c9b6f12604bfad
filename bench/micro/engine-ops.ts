// What each engine operation costs on RedisTokenStore, per Redis client, on a private redis-server:
// - round trips: the commands Redis ran for one operation on the store's client connection, from
//   SLOWLOG with every command logged (a script's inner calls are logged without a client address
//   and left out; INFO's total_commands_processed counts them, so it does not tell round trips),
//   and the µs Redis spent running them (SLOWLOG's durations, a script's inner calls included);
// - µs per operation: the median of 5 rounds of N sequential operations, SLOWLOG off.
// Runs unchanged before and after the store's engine was derived from its contract (issue 51):
// engineOf(store) is the store's own engine before, the derived one with its fast paths after;
// deriveEngine(store) is every step derived from the contract's four methods, no fast path.
// Run: node -r esbuild-register bench/micro/engine-ops.ts   (N=1000 per round; 100 N from memory)
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { RedisTokenStore } from '../../lib/index';
import { deriveEngine, engineOf } from '../../lib/core/derived-engine';
import { beginEntry } from '../../lib/core/entry-begin';
import { hashSessionId } from '../../lib/core/hash';
import type { TokenRecord } from '../../lib/core/token-record';
import type { StoreEngine, TokenRecords } from '../../lib/core/store-engine';
import { startRedisServer } from '../../test/helpers/redis-server';
import { loadAverage as load } from '../lib/machine';
import { sampleRecord } from '../lib/records';
import { median } from '../lib/stats';

const N = Number(process.env.N ?? 1000);
const ROUNDS = 5;
const COUNTED = 50;
const TTL = { ttlMs: 86_400_000 };
const WINDOW_MS = 600_000;
const ADDRESS = 'ip:203.0.113.7';

type Login = { sessionKey: string; record: TokenRecord };
/** An operation's i-th run; with `written` set, `batch[i]` is a fresh login (true: stored). */
type Operation = { name: string; run: (i: number) => unknown; written?: boolean };

let serial = 0;
let batch: Login[] = [];
let misses = 0;
const fresh = (): Login => ({ sessionKey: hashSessionId(`o${serial++}`), record: sampleRecord() });
const putFresh = (records: TokenRecords, { sessionKey, record }: Login) =>
  records.put(sessionKey, record, { ...TTL, expectedVersion: null });

async function operations(engine: StoreEngine): Promise<Operation[]> {
  const { records, locks, counters, logins } = engine;
  const { sessionKey: kept, record } = fresh();
  await putFresh(records, { sessionKey: kept, record });
  const loginGeneration = await records.loginGeneration();
  let version = 1;
  const entry = {
    ...{ failureKey: ADDRESS, failedKey: `${ADDRESS}:failed`, failureLimit: 1_000_000 },
    ...{ failureWindowMs: WINDOW_MS, holdKey: 'code-exchanges', holdVersion: 1, probeKey: 'probe' },
    ...{ probeTtlMs: 1000, budgetKey: 'budget', budgetPerSecond: 20, claimTtlMs: 600_000 },
  };
  const enter = () => beginEntry(engine, { ...entry, claimKey: `c${serial++}` });
  const lock = async () => locks.release(kept, (await locks.acquire(kept, 5000))!);
  const options = { ...TTL, expectedVersion: null, loginGeneration };
  const giveBack = { key: ADDRESS, windowMs: WINDOW_MS };
  // Without `logins`, as the callback does: the record's write, then the count given back.
  const newLogin = async (login: Login) => {
    if (logins) return logins.put({ ...login, ...options, giveBack, session: undefined });
    if (await records.put(login.sessionKey, login.record, options))
      await counters.countInWindow(ADDRESS, -1, WINDOW_MS);
  };
  const refresh = async () => {
    const next = { ...record, version: version + 1 };
    if (await records.put(kept, next, { ...TTL, expectedVersion: version })) version += 1;
  };
  // As the logout handler asks: with the player before (its index entry went too), without after.
  const logout = ({ sessionKey, record: { openId } }: Login, asked = { openId, logout: true }) =>
    records.delete(sessionKey, asked);
  return [
    { name: "an entry's checks", run: enter },
    { name: "a new login's write", run: (i) => newLogin(batch[i]!), written: false },
    { name: "a refresh's record write", run: refresh },
    { name: 'lock acquire + release', run: lock },
    { name: 'countInWindow +1', run: () => counters.countInWindow('ops', 1, WINDOW_MS) },
    { name: 'records.delete (a logout)', run: (i) => logout(batch[i]!), written: true },
    { name: 'records.renew', run: () => records.renew(kept, record.openId, TTL.ttlMs) },
    { name: 'records.get', run: () => records.get(kept) },
    ...(records.cachedRead === undefined
      ? []
      : [{ name: 'records.cachedRead (a hit)', run: () => records.cachedRead!(kept) ?? misses++ }]),
  ];
}

type SlowlogEntry = [number, number, number, string[], string, string];
const addressOf = (info: unknown) => /addr=(\S+)/.exec(String(info))![1];
/** Each command's name and how many times an operation sent it. */
const listed = (entries: SlowlogEntry[]) => {
  const names = entries.map((e) => e[3][0]!.toLowerCase());
  const times = (name: string) => +(names.filter((n) => n === name).length / COUNTED).toFixed(2);
  return [...new Set(names)].map((name) => `${name} ×${times(name)}`).join(', ');
};

async function main(): Promise<void> {
  const server = await startRedisServer();
  const admin = new Redis({ port: server.port });
  await admin.config('SET', 'slowlog-max-len', '100000');
  const slowlog = (on: boolean) => admin.config('SET', 'slowlog-log-slower-than', on ? '0' : '-1');
  console.log(`Node ${process.version}, N ${N}, load average ${load()}`);
  console.log('| client | engine | operation | round trips | commands | Redis µs | µs per op |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const kind of ['ioredis', 'node-redis'] as const) {
    const redis =
      kind === 'ioredis'
        ? new Redis({ port: server.port })
        : await createClient({ socket: { port: server.port } }).connect();
    const own = addressOf(
      await (redis instanceof Redis ? redis.client('INFO') : redis.sendCommand(['CLIENT', 'INFO'])),
    );
    const store = new RedisTokenStore({ redis, prefix: `engine-ops-${kind}:` });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the cache's tracking connects
    const engines = { engineOf: engineOf(store), deriveEngine: deriveEngine(store) };
    for (const [variant, engine] of Object.entries(engines))
      for (const op of await operations(engine)) {
        /** µs per run of `count` runs, after untimed writes of what they need. */
        const timed = async (count: number, counting = false) => {
          batch = op.written === undefined ? [] : Array.from({ length: count }, fresh);
          if (op.written === true) for (const login of batch) await putFresh(engine.records, login);
          await Promise.all([slowlog(counting), counting && admin.slowlog('RESET')]);
          const start = process.hrtime.bigint();
          for (let i = 0; i < count; i += 1) {
            const result = op.run(i);
            if (result instanceof Promise) await result;
            else if (i % 1000 === 999) await new Promise(setImmediate); // the cache's lease renews
          }
          return Number(process.hrtime.bigint() - start) / 1000 / count;
        };
        await timed(100); // warm-up
        misses = 0;
        await timed(COUNTED, true);
        const logged = (await admin.slowlog('GET', -1)) as SlowlogEntry[];
        const mine = logged.filter((e) => e[4] === own);
        const redisUs = (mine.reduce((sum, e) => sum + e[2], 0) / COUNTED).toFixed(1);
        const us: number[] = [];
        const runs = mine.length === 0 ? N * 100 : N; // from memory: more runs, for a steady figure
        for (let round = 0; round < ROUNDS; round += 1) us.push(await timed(runs));
        const trips = String(+(mine.length / COUNTED).toFixed(2));
        const name = misses === 0 ? op.name : `${op.name}, ${misses} misses`;
        const row = [kind, variant, name, trips, listed(mine), redisUs];
        console.log(`| ${row.join(' | ')} | ${median(us).toFixed(2)} |`);
      }
    await Promise.all([store.close(), redis instanceof Redis ? redis.quit() : redis.close()]);
  }
  console.log(`load average at the end ${load()}`);
  admin.disconnect();
  await server.stop();
}

void main();
