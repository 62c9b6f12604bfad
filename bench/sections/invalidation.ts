// Section "invalidation": how long a key deleted by hand (`DEL` from another Redis connection)
// stays visible to 2 app processes that serve it from memory: from the DEL to the first 401 in both,
// over many trials; on one redis-server, and (runInvalidationOn, for `cluster`) on a Redis Cluster.
import type { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Redis } from 'ioredis';
import { createClient } from 'redis';
import type { NodeRedisAny } from '../../lib/redis/node-redis-commands';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import type { ClientChoice } from '../apps/session-stack';
import { harnessReports, startHarnessApps, stopApps, type AppProcess } from '../lib/app-process';
import { asPlayer, keepAliveAgent, send, type Target } from '../lib/load';
import { heldRecord, nextChange, readRecord, recordKeyOf, sampleRecord } from '../lib/records';
import { driverStore, sessionKeyOf, writeRecord } from '../lib/records';
import { table, type BenchContext, type Figure, type SectionResult } from '../lib/report';
import { enter, loginBaseline, playerOf, type BenchSession } from '../lib/sessions';
import { count, fine, ms, summarize, type LatencySummary } from '../lib/stats';

const PROCESSES = 2;
const HOUR_MS = 3_600_000;
/** A record's put back, whatever was there. */
const PUT_NEW = { expectedVersion: null, ttlMs: HOUR_MS };
/** The goal of issue 16 on loopback. */
const GOAL_P99_MS = 5;
/** Requests per process on each path before the trials. */
const WARM_UP_REQUESTS = 2000;
/** At most this long for the processes' deletes of an ended session to reach Redis (ms). */
const SETTLE_MS = 100;
/** A trial's reads after the put back answer 200 within this long, or the section fails (ms). */
const RESTORE_WITHIN_MS = 1000;

/** The layouts side by side, a trial of each in turn: their rows (keys under `inv-<name>:`). */
type LayoutName = 'memory' | 'redis' | 'baseline' | 'sessions';
const LAYOUTS: Record<LayoutName, string> = {
  memory: 'package, records from memory (default)',
  redis: 'package, records read from Redis each time',
  baseline: 'session stack alone, its session deleted',
  sessions: 'RedisSessionStore (sessions from memory), its session deleted',
};

/** One layout's processes, what its trials poll, the key they delete and how it is put back. */
interface Layout {
  name: LayoutName;
  apps: AppProcess[];
  /** `GET /api/me` of the logged-in session, to each process. */
  targets: Target[];
  /** The same with the cookie of a session whose key is gone: the 401 path, for the warm-up. */
  loggedOut: Target[];
  key: string;
  restore: () => Promise<void>;
  /** Puts back what a 401 of `loggedOut` removes, so that each warm-up 401 takes a trial's path. */
  restoreLoggedOut: () => Promise<void>;
}

/**
 * What a layout's trials came to: the ms from each DEL to the later of the two first 401s, the
 * 200s just before the DELs (for scale), the 200s after them, and the 401s to a read after the key
 * was put back (the absence still served from memory: the trial puts it back again).
 */
type Samples = Record<'untilBoth' | 'requests', number[]> &
  Record<'staleAnswers' | 'staleAbsences', number>;

/** A layout's summed-up trials, with the time their 401s spent inside the app processes. */
type Variant = Omit<Samples, 'untilBoth' | 'requests'> &
  Record<'untilBoth' | 'request' | 'inApp401', LatencySummary>;

const LAYOUT_COLUMNS =
  "layout | DEL → 401 in both, p50 ms | p99 ms | max ms | stale 200s | stale 401s after the put back | one request p50 ms | one request p99 ms | the 401's time in its process, p50 ms | p99 ms";

const layoutRow = (name: LayoutName, v: Variant): string[] => [
  LAYOUTS[name],
  ...[v.untilBoth.p50, v.untilBoth.p99, v.untilBoth.max].map(fine),
  ...[String(v.staleAnswers), String(v.staleAbsences), ms(v.request.p50), ms(v.request.p99)],
  ...[fine(v.inApp401.p50), fine(v.inApp401.p99)],
];

/**
 * Where the keys live (`standalone` or `cluster`): the apps' env and client, the driver's own
 * connection (it deletes and puts back keys), and a node-redis client not yet connected.
 */
export interface InvalidationRedis {
  name: string;
  env: { REDIS_URL: string; REDIS_CLUSTER_NODES?: string };
  driver: Redis | Cluster;
  client: ClientChoice;
  nodeRedis: () => NodeRedisAny & { connect(): Promise<unknown>; close(): Promise<unknown> };
}

const sessionOnly = (name: LayoutName): boolean => name === 'baseline' || name === 'sessions';

async function startLayout(
  ctx: BenchContext,
  on: InvalidationRedis,
  name: LayoutName,
  agent: Agent,
): Promise<Layout> {
  const prefix = `inv-${name}:`;
  const redis = on.driver;
  const apps = await startHarnessApps(sessionOnly(name) ? 'baseline' : 'package', PROCESSES, {
    ...{ ...on.env, SIM_URL: ctx.sim.url, KEY_PREFIX: prefix, BENCH_TIME_401: '1' },
    BENCH_REDIS_CLIENT: on.client,
    BENCH_STORE_CACHE: name === 'redis' ? '0' : undefined,
    BENCH_SESSION_STORE: name === 'sessions' ? 'memory' : undefined,
  });
  try {
    const login = (index: number): Promise<BenchSession> =>
      sessionOnly(name)
        ? loginBaseline(agent, apps[0]!.port, playerOf(index))
        : enter(agent, ctx.sim, apps[0]!.port, playerOf(index));
    const [session, gone] = [await login(0), await login(1)];
    /** A key's value, to put back as it was. */
    const valueOf = async (key: string): Promise<Buffer> =>
      (await redis.getBuffer(key)) ?? Promise.reject(new Error(`${name}: no session in Redis`));
    const sessionKey = sessionKeyOf(prefix, session.sessionId);
    const sessionValue = await valueOf(sessionKey);
    const putSession = (): Promise<unknown> => redis.set(sessionKey, sessionValue, 'PX', HOUR_MS);
    const to = (cookie: string): Target[] => apps.map(({ port }) => asPlayer(port, cookie));
    const layout = { name, apps, targets: to(session.cookie), loggedOut: to(gone.cookie) };
    if (sessionOnly(name)) {
      await redis.del(sessionKeyOf(prefix, gone.sessionId));
      const restore = async (): Promise<void> => void (await putSession());
      return { ...layout, key: sessionKey, restore, restoreLoggedOut: async () => {} };
    }
    const store = driverStore(redis, `${prefix}t:`);
    const record = await readRecord(store, session.sessionId);
    if (record === undefined) throw new Error('no token record after the entry');
    // A 401 for a gone record also ends the session (as logout does): put both back per trial.
    await redis.del(recordKeyOf(`${prefix}t:`, gone.sessionId));
    const goneKey = sessionKeyOf(prefix, gone.sessionId);
    const goneValue = await valueOf(goneKey);
    return {
      ...layout,
      key: recordKeyOf(`${prefix}t:`, session.sessionId),
      restoreLoggedOut: async () => void (await redis.set(goneKey, goneValue, 'PX', HOUR_MS)),
      // Refused only while the record is still there (the first trial); the reads that follow
      // the put check that it is.
      restore: async () => {
        // First the processes' own deletes of the ended session, which could log the next trial out.
        const deadline = performance.now() + SETTLE_MS;
        while ((await redis.exists(sessionKey)) === 1 && performance.now() < deadline)
          await sleep(1);
        // The other process's delete, when it sent one, went out as early.
        await sleep(1);
        await putSession();
        await writeRecord(store, session.sessionId, record, PUT_NEW);
      },
    };
  } catch (error) {
    await stopApps(apps);
    throw error;
  }
}

/** One trial: the key put back and read twice by each process, a DEL, then reads until both 401. */
async function trial(agent: Agent, on: InvalidationRedis, layout: Layout, into: Samples) {
  await layout.restore();
  // Let the put's own invalidation reach both processes, then have each read (and cache) it.
  await sleep(2);
  const deadline = performance.now() + RESTORE_WITHIN_MS;
  for (const target of layout.targets) {
    for (let read = 0; read < 2; read += 1) {
      const answer = await send(agent, target);
      if (answer.status === 401 && performance.now() < deadline) {
        // The 401 ended the session again: put both back and read anew.
        into.staleAbsences += 1;
        await sleep(5);
        await layout.restore();
        read -= 1;
        continue;
      }
      if (answer.status !== 200)
        throw new Error(`${layout.name} (${on.name}): a warm-up read answered ${answer.status}`);
      into.requests.push(answer.ms);
    }
  }
  const sentAt = performance.now();
  // The requests go out once Redis has run the DEL: "the next request" after it. Sent alongside
  // it, a request could reach a process before Redis had even run the DEL, and be counted stale.
  await on.driver.del(layout.key);
  const firsts = await Promise.all(
    layout.targets.map(async (target) => {
      for (;;) {
        const answer = await send(agent, target);
        if (answer.status === 401) return performance.now() - sentAt;
        if (answer.status !== 200) throw new Error(`a read answered ${answer.status}`);
        into.staleAnswers += 1;
      }
    }),
  );
  into.untilBoth.push(Math.max(...firsts));
}

async function measure(
  ctx: BenchContext,
  trials: number,
  on: InvalidationRedis,
  names: readonly LayoutName[],
): Promise<Partial<Record<LayoutName, Variant>>> {
  const agent = keepAliveAgent(1);
  const layouts: Layout[] = [];
  try {
    for (const name of names) layouts.push(await startLayout(ctx, on, name, agent));
    // Both paths a trial takes (a 200, a 401), through each process: without them the first
    // trials time V8's compiler, and a p99 over 1,000 trials is their 10th slowest.
    for (const layout of layouts)
      for (const [index, target] of layout.targets.entries())
        for (let request = 0; request < WARM_UP_REQUESTS; request += 1) {
          await layout.restoreLoggedOut();
          const ok = await send(agent, target);
          const gone = await send(agent, layout.loggedOut[index]!);
          if (ok.status !== 200 || gone.status !== 401)
            throw new Error(`${layout.name} warm-up answered ${ok.status} and ${gone.status}`);
        }
    // The warm-up's own 401s left out.
    for (const layout of layouts) await harnessReports(layout.apps, '/bench/times-401');
    const none = { staleAnswers: 0, staleAbsences: 0 };
    const samples = layouts.map((): Samples => ({ untilBoth: [], requests: [], ...none }));
    // A trial of each layout in turn, in a rotating order: drift in the machine's load during the
    // run falls on all of them alike.
    for (let round = 0; round < trials; round += 1)
      for (let step = 0; step < layouts.length; step += 1) {
        const index = (round + step) % layouts.length;
        await trial(agent, on, layouts[index]!, samples[index]!);
      }
    const result: Partial<Record<LayoutName, Variant>> = {};
    for (const [index, layout] of layouts.entries()) {
      const { untilBoth, requests, ...stale } = samples[index]!;
      const inApp401 = summarize(await harnessReports(layout.apps, '/bench/times-401'));
      const [until, request] = [summarize(untilBoth), summarize(requests)];
      result[layout.name] = { ...stale, untilBoth: until, request, inApp401 };
    }
    return result;
  } finally {
    agent.destroy();
    for (const layout of layouts) await stopApps(layout.apps);
  }
}

/** A refresh waiter from another process's write to seeing it: woken by the store, or polling. */
async function waiterWake(ctx: BenchContext, trials: number) {
  const clients = [ctx.redis.duplicate(), ctx.redis.duplicate(), ctx.redis.duplicate()];
  const prefix = 'wake:';
  const [writer, polled] = [driverStore(clients[0]!, prefix), driverStore(clients[2]!, prefix)];
  const woken = new RedisTokenStore({ redis: clients[1]!, prefix });
  const cas = (version: number) => ({ expectedVersion: version - 1 || null, ttlMs: HOUR_MS });
  const put = (sessionId: string, version: number) =>
    writeRecord(writer, sessionId, { ...sampleRecord(), version }, cas(version));
  try {
    while (!woken.recordCacheActive) await sleep(10);
    const times = { woken: [] as number[], polled: [] as number[] };
    for (let trial = 0; trial < trials; trial += 1) {
      for (const variant of ['woken', 'polled'] as const) {
        const sessionId = `wake-${variant}-${trial}`;
        const reader = variant === 'woken' ? woken : polled;
        await put(sessionId, 1);
        await sleep(2);
        await readRecord(reader, sessionId);
        const seen = (async () => {
          for (;;) {
            await (variant === 'woken'
              ? nextChange(reader, sessionId, 250)
              : sleep(25 + Math.random() * 50));
            if ((await readRecord(reader, sessionId))?.version === 2) return performance.now();
          }
        })();
        await sleep(Math.random() * 50);
        const sentAt = performance.now();
        await put(sessionId, 2);
        times[variant].push((await seen) - sentAt);
      }
    }
    return { woken: summarize(times.woken), polled: summarize(times.polled) };
  } finally {
    await woken.close();
    for (const client of clients) client.disconnect();
  }
}

/** The invalidation without HTTP: from a DEL to two stores on connections of their own dropping it. */
async function storesDrop(on: InvalidationRedis, trials: number, kind: ClientChoice) {
  const prefix = `drop-${kind}:`;
  // Redis's and Cluster's duplicate() take different arguments: a union of them is not callable.
  const duplicate = (): Redis | Cluster =>
    on.driver.isCluster ? (on.driver as Cluster).duplicate() : (on.driver as Redis).duplicate();
  const ioredis = kind === 'ioredis' ? [duplicate(), duplicate()] : [];
  const nodeRedis = kind === 'ioredis' ? [] : [on.nodeRedis(), on.nodeRedis()];
  await Promise.all(nodeRedis.map((client) => client.connect()));
  const stores = [...ioredis, ...nodeRedis].map((redis) => new RedisTokenStore({ redis, prefix }));
  const writer = driverStore(on.driver, prefix);
  try {
    while (!stores.every((store) => store.recordCacheActive)) await sleep(10);
    const record = sampleRecord();
    const sessionId = 'drop-session-0123456789abcdef';
    const times: number[] = [];
    for (let trial = 0; trial < trials; trial += 1) {
      await writeRecord(writer, sessionId, record, PUT_NEW);
      await sleep(2);
      for (const store of stores) await readRecord(store, sessionId);
      if (stores.some((store) => heldRecord(store, sessionId) === undefined))
        throw new Error('the record was not cached');
      const dropped = stores.map((store) => nextChange(store, sessionId, 1000));
      const sentAt = performance.now();
      await Promise.all([on.driver.del(recordKeyOf(prefix, sessionId)), ...dropped]);
      times.push(performance.now() - sentAt);
      if (stores.some((store) => heldRecord(store, sessionId) !== undefined))
        throw new Error('a store still held the record after its wake-up');
    }
    return summarize(times);
  } finally {
    for (const store of stores) await store.close();
    for (const client of ioredis) client.disconnect();
    await Promise.all(nodeRedis.map((client) => client.close()));
  }
}

const p50p99 = (s: LatencySummary): string => `${fine(s.p50)} / ${fine(s.p99)} ms`;
const dropLine = (drop: LatencySummary): string =>
  `p50 ${fine(drop.p50)}, p90 ${fine(drop.p90)}, p99 ${fine(drop.p99)}, max ${fine(drop.max)} ms`;

/** The section on the driver's redis-server, on ioredis: as it always ran. */
export const runInvalidation = (ctx: BenchContext): Promise<SectionResult> =>
  runInvalidationOn(ctx, {
    name: 'standalone',
    env: { REDIS_URL: ctx.redisUrl },
    driver: ctx.redis,
    client: 'ioredis',
    nodeRedis: () => createClient({ url: ctx.redisUrl }),
  });

/**
 * On one redis-server: every layout, the drop on both clients, and refresh waiters; on a Cluster,
 * on one client: records from memory and the session stack alone, and the drop on that client.
 */
export async function runInvalidationOn(
  ctx: BenchContext,
  on: InvalidationRedis,
): Promise<SectionResult> {
  const trials = ctx.quick ? 100 : 1000;
  const standalone = on.name === 'standalone';
  const label = standalone ? '' : ` (${on.client}, ${on.name})`;
  const names: LayoutName[] = standalone
    ? ['memory', 'redis', 'baseline', 'sessions']
    : ['memory', 'baseline'];
  ctx.log(`invalidation${label}: ${trials} trials of each layout (${names.join(', ')})`);
  const measured = await measure(ctx, trials, on, names);
  const { memory, redis, baseline, sessions } = measured as Record<LayoutName, Variant>;
  ctx.log(`invalidation${label}: ${trials} trials, DEL → dropped from two stores' memory`);
  const drop = await storesDrop(on, trials, on.client);
  const dropNodeRedis = standalone ? await storesDrop(on, trials, 'node-redis') : undefined;
  const wakeTrials = ctx.quick ? 20 : 200;
  const wake = standalone ? await waiterWake(ctx, wakeTrials) : undefined;
  // The 200s served from memory after Redis ran the DEL, before its message reached the process.
  const stale = (layout: Variant): string =>
    `${count(layout.staleAnswers)} stale 200s${standalone ? " (served from memory after the DEL, before Redis's message arrived)" : ''}`;
  const target = `p99 ≤ ${GOAL_P99_MS} ms`;
  const over = `over ${count(trials)} trials`;
  const figures: Figure[] = [
    {
      name: `invalidation${label}: DEL by hand → first 401 in both of 2 processes (records from memory), p50 / p99`,
      measured:
        `${p50p99(memory.untilBoth)} ${over}, ${stale(memory)} (` +
        (redis ? `reading Redis each time: ${p50p99(redis.untilBoth)}; ` : '') +
        `the session stack alone, its session deleted: ${p50p99(baseline.untilBoth)})`,
      target,
      met: memory.untilBoth.p99 <= GOAL_P99_MS,
    },
    ...(sessions
      ? [
          {
            name: 'invalidation: DEL of a session key → first 401 in both of 2 processes (RedisSessionStore, sessions from memory), p50 / p99',
            measured: `${p50p99(sessions.untilBoth)} ${over}, ${stale(sessions)} (connect-redis: ${p50p99(baseline.untilBoth)})`,
            target,
            met: sessions.untilBoth.p99 <= GOAL_P99_MS,
          },
        ]
      : []),
    {
      name: `invalidation itself${label}: DEL → the record dropped from the memory of 2 stores${standalone ? ' on their own connections' : ''} (no HTTP), p50 / p99`,
      measured: `${p50p99(drop)} ${over} (max ${fine(drop.max)} ms)`,
      target,
      met: drop.p99 <= GOAL_P99_MS,
    },
  ];
  if (dropNodeRedis && wake)
    figures.push(
      {
        name: 'invalidation itself on node-redis: DEL → the record dropped from the memory of 2 stores (no HTTP), p50 / p99',
        measured: `${p50p99(dropNodeRedis)} ${over} (max ${fine(dropNodeRedis.max)} ms; ioredis above: ${fine(drop.p99)} ms p99)`,
        target,
        met: dropNodeRedis.p99 <= GOAL_P99_MS,
      },
      {
        name: "invalidation: refresh waiter: another process's write → the waiter sees it, woken by Redis vs polling 25–75 ms, p50 / p99",
        measured: `${p50p99(wake.woken)} woken; ${ms(wake.polled.p50)} / ${ms(wake.polled.p99)} ms polling (${count(wakeTrials)} trials each)`,
        target: 'reported',
      },
    );
  const markdown = [
    `## invalidation${label}`,
    '',
    `Two harness app processes per layout${standalone ? '' : ` on the Cluster (REDIS_CLUSTER_NODES, ${on.client})`}, ${count(WARM_UP_REQUESTS)} warm-up requests on each path, then ${count(trials)} trials of each layout in turn: the key put back, each process answering twice, a \`DEL\` from the driver's connection, a request in flight to each process until both answer 401 (what each column means: bench/README.md). ` +
      `Without HTTP, two stores holding the record on ${on.client} connections of their own, a DEL, the time until both dropped it: ${dropLine(drop)}.`,
    '',
    ...table(
      LAYOUT_COLUMNS,
      names.map((name) => layoutRow(name, measured[name]!)),
    ),
  ];
  if (wake !== undefined) {
    const waiterRow = (name: string, s: LatencySummary, format: (value: number) => string) => [
      ...[name, ...[s.p50, s.p90, s.p99, s.max].map(format)],
    ];
    markdown.push(
      '',
      `Refresh waiters, ${count(wakeTrials)} trials each: one store writes version 2 of a record at a random moment while another waits for it, woken by \`waitForChange\` or sleeping 25–75 ms between reads; the time from sending the write to the waiter holding version 2.`,
      '',
      ...table('waiter | p50 ms | p90 ms | p99 ms | max ms', [
        waiterRow('woken by Redis (waitForChange)', wake.woken, fine),
        waiterRow('polling every 25–75 ms (before)', wake.polled, ms),
      ]),
    );
  }
  return { figures, markdown };
}
