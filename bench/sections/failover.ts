// Section "failover" (issue #43, docs/durability.md): a Redis primary whose replica's replication
// stream runs 1 s behind is SIGKILLed under load, and the replica promoted (three sentinels; or a
// Cluster master and its replica). Four processes of the example game backend, as `npm run example`
// starts it: two with durability on (the default) and two with it off (apps/example-durability.ts),
// side by side on the same bed, each pair with players of its own; two beds per topology and
// client, their latencies pooled. The platform (the simulator behind lib/platform-recorder.ts)
// rotates refresh tokens and issues 62 s access tokens, which the example refreshes 60 s before
// they end: a refresh every ~2 s per player. Counted per pair: players answered 303 who are logged
// out after the promotion settled, retired refresh tokens presented, 5xx other than 503, 401s to
// logged-in players, latencies before the kill, and what durability adds to a refresh and an entry.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { hashSessionId } from '../../lib/core/hash';
import { keySlot } from '../../lib/stores/redis/commands';
import { startSimulator } from '../../lib/simulator';
import { startClusterBed, startSentinelBed, type Address } from '../../test/helpers/failover-bed';
import type { ClientChoice } from '../apps/session-stack';
import { startApp, stopApps, type AppProcess } from '../lib/app-process';
import { errorOf, keepAliveAgent, send } from '../lib/load';
import { startPlatformRecorder, type TokenCall } from '../lib/platform-recorder';
import { recordKeyOf } from '../lib/records';
import { table, tally, tallyList, type BenchContext, type Figure } from '../lib/report';
import type { SectionResult } from '../lib/report';
import { entryHeaders, sessionIn } from '../lib/sessions';
import { BENCH_REDIRECT_URI, BENCH_SESSION_SECRET } from '../lib/settings';
import { count, ms, percentile } from '../lib/stats';

/** How far the replica's replication stream runs behind its master (BENCH_FAILOVER_LAG_MS). */
const LAG_MS = Number(process.env.BENCH_FAILOVER_LAG_MS ?? 1000);
/**
 * BENCH_FAILOVER_CONTROL=1: both groups run with durability off (an A/A run), so the on ÷ off
 * ratios show how far two groups alike drift apart on this machine: the resolution of the p50 target.
 */
const CONTROL = process.env.BENCH_FAILOVER_CONTROL === '1';
const ACCESS_TOKEN_SECONDS = 62;
/** A new player per durability setting this often, all along. */
const ENTRY_INTERVAL_MS = 250;
/** Between a player's requests: THINK_MS × (0.5 … 1.5). */
const THINK_MS = 250;
/**
 * Why the p50 target is taken over players past their first refresh: an entry with durability on
 * is answered once a replica holds it, ~the lag after the exchange that issued its access token,
 * so its first refresh comes ~the lag sooner (1 s of the bench's 2 s; a real token leaves hours).
 */
const STEADY_NOTE =
  "an entry waits for a replica after the exchange, so its player's first refresh comes ~the lag sooner: the 'on' players carry more refreshes per request until then";
/** The load before the kill (players past their first refresh dominate the p50) and after. */
const timingOf = (quick: boolean): { warmupMs: number; afterMs: number } =>
  quick ? { warmupMs: 6000, afterMs: 5000 } : { warmupMs: 20_000, afterMs: 10_000 };
/**
 * Beds per topology and client (BENCH_FAILOVER_BEDS), their latencies pooled: a process keeps the
 * speed it was born with (~5 % apart here); two beds put four processes behind each p50.
 */
const bedsOf = (quick: boolean): number =>
  Number(process.env.BENCH_FAILOVER_BEDS ?? (quick ? 1 : 2));
/** Latencies before the kill count from here on (the processes' first seconds are their slowest). */
const MEASURE_FROM_MS = 3000;
const PLAYERS_PER_SETTING = 400;
/** The example's key prefixes (example-app/start.ts). */
const TOKEN_PREFIX = 'example:tokens:';
const SESSION_PREFIX = 'example:sess:';
const DURABILITY_SWITCH = join(__dirname, '..', 'apps', 'example-durability.ts');

type Topology = 'sentinel' | 'cluster';
type Setting = 'on' | 'off';
const SETTINGS: readonly Setting[] = ['on', 'off'];

interface Player {
  setting: Setting;
  openId: string;
  /** Which of the pair's two processes it entered through. */
  entryApp: number;
  sentMs: number;
  endMs: number;
  entryStatus: number;
  entryError: string;
  cookie?: string;
  sessionHash?: string;
  /** Cluster: which of its keys live on the shard whose master is killed. */
  keysOnKilledShard?: { record: boolean; session: boolean };
  /** The final check after the run: each process's status for GET /api/me. */
  finalStatuses?: number[];
  /** When its first refresh call at the platform ended (ms from the load's start). */
  firstRefreshEndMs?: number;
}

interface Outcome {
  player: Player;
  app: number;
  path: string;
  sentMs: number;
  endMs: number;
  status: number;
  error: string;
  refreshed: boolean;
  /** How long after its player's latest refresh call (ended before it was sent) it was sent, ms. */
  sinceRefreshMs: number;
}

interface LogLine {
  atMs: number;
  app: string;
  setting: Setting;
  text: string;
}

interface Timeline {
  killMs: number;
  promotedMs: number;
  endMs: number;
  /** The final check and the metrics done, the processes about to be stopped. */
  doneMs: number;
}

interface SettingResult {
  setting: Setting;
  players: Player[];
  outcomes: Outcome[];
  tokenCalls: TokenCall[];
  metrics: Map<string, number>;
}

type RunResult = Awaited<ReturnType<typeof runOnce>>;

/** The bed of one run: what the example is told, and the failover. */
interface Bed {
  env: Record<string, string>;
  kill(): Promise<void>;
  waitForPromotion(): Promise<Address>;
  stop(): Promise<void>;
  killedSlots?: [number, number];
}

const hostList = (addresses: readonly Address[]): string =>
  addresses.map((a) => `${a.host}:${a.port}`).join(',');

async function startBed(topology: Topology): Promise<Bed> {
  const options = { replicationDelayMs: LAG_MS, proxiesInChildProcess: true };
  if (topology === 'sentinel') {
    const bed = await startSentinelBed(options);
    return {
      env: { REDIS_SENTINELS: hostList(bed.sentinels), REDIS_SENTINEL_NAME: bed.masterName },
      kill: () => bed.killPrimary(),
      waitForPromotion: () => bed.waitForPromotion(30_000),
      stop: () => bed.stop(),
    };
  }
  const bed = await startClusterBed(options);
  return {
    env: { REDIS_CLUSTER_NODES: hostList(bed.nodes) },
    kill: () => bed.killMaster(0),
    waitForPromotion: () => bed.waitForPromotion(0, 30_000),
    stop: () => bed.stop(),
    killedSlots: bed.masters[0]!.slots,
  };
}

/** The simulator's players: a set of its own for each durability setting. */
const openIdOf = (setting: Setting, index: number): string =>
  `${setting}-${String(index).padStart(4, '0')}`;
const playersFor = () =>
  SETTINGS.flatMap((setting) =>
    Array.from({ length: PLAYERS_PER_SETTING }, (_, index) => ({
      openId: openIdOf(setting, index),
      nickname: `Player ${setting} ${index}`,
      scope: ['user_info', 'basic_actions'],
    })),
  );

/** Sums the package's failover metrics (`epl_replica_*`, `epl_refresh_failures`) of one process. */
async function scrapeMetrics(port: number, into: Map<string, number>): Promise<void> {
  const answer = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
  if (answer?.ok !== true) return;
  for (const line of (await answer.text()).split('\n')) {
    const match =
      /^(epl_replica_waits|epl_replica_reasserts|epl_refresh_failures|epl_replica_wait_duration_seconds_(?:sum|count))\w*(?:\{([^}]*)\})? ([\d.e+-]+)/.exec(
        line,
      );
    if (!match) continue;
    const labels = (match[2] ?? '')
      .split(',')
      .filter((pair) => /^(outcome|code)=/.test(pair))
      .map((pair) => pair.replace(/"/g, ''))
      .join(',');
    const key = `${match[1]}{${labels}}`;
    into.set(key, (into.get(key) ?? 0) + Number(match[3]));
  }
}

async function runOnce(
  ctx: BenchContext,
  client: ClientChoice,
  topology: Topology,
  order: readonly Setting[],
) {
  const { warmupMs, afterMs } = timingOf(ctx.quick);
  const stops: Array<() => Promise<void>> = [];
  const running: AppProcess[] = [];
  const agent = keepAliveAgent(256);
  const logs: LogLine[] = [];
  const label = `failover (${client}, ${topology})`;
  try {
    const bedStart = performance.now();
    const bed = await startBed(topology);
    stops.push(() => bed.stop());
    const sim = await startSimulator({
      rotateRefreshTokens: true,
      accessTokenLifetimeSeconds: ACCESS_TOKEN_SECONDS,
      players: playersFor(),
    });
    stops.push(() => sim.close());
    const recorder = await startPlatformRecorder(sim.url);
    stops.push(() => recorder.close());
    const seconds = (since: number): string => ((performance.now() - since) / 1000).toFixed(1);
    ctx.log(`${label}: bed up in ${seconds(bedStart)} s; starting 4 example processes`);

    const apps: Record<Setting, AppProcess[]> = { on: [], off: [] };
    // Started in turn (on, off, on, off; off first every other run: a process keeps the speed it
    // was born with), one at a time: parallel starts thrash 2 cores.
    for (const index of [0, 1])
      for (const setting of order) {
        const name = `${setting}${index === 0 ? 'A' : 'B'}`;
        const app = await startApp({
          name: `example (durability ${setting}, ${name})`,
          script: 'example-app/server.ts',
          preload: [DURABILITY_SWITCH],
          env: {
            ...bed.env,
            REDIS_URL: '',
            REDIS_CLIENT: client === 'ioredis' ? 'ioredis' : 'redis',
            PORT: '0',
            HOST: '127.0.0.1',
            PLATFORM_AUTH_URL: recorder.url,
            PLATFORM_ORIGINS: recorder.url,
            PLATFORM_REDIRECT_URI: BENCH_REDIRECT_URI,
            SESSION_SECRET: BENCH_SESSION_SECRET,
            ENTRY_FAILURE_LIMIT: '0',
            NODE_ENV: '',
            BENCH_DURABILITY: CONTROL ? 'off' : setting,
            // Every line of the package, debug included, for the story of a lost login.
            DEBUG: 'express-platform-login:*',
            DEBUG_COLORS: '0',
          },
          listening: /Example game backend: http:\/\/[^:]+:(\d+)/,
          onLine: (text) => {
            if (text.trim() !== '')
              logs.push({ atMs: performance.now(), app: name, setting, text });
          },
        });
        running.push(app);
        apps[setting].push(app);
      }

    const players: Player[] = [];
    const outcomes: Outcome[] = [];
    const loops: Promise<void>[] = [];
    let loading = true;
    const origin = performance.now();
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const now = (): number => performance.now() - origin;
    const get = (player: Player, app: AppProcess, path: string) =>
      send(
        agent,
        { port: app.port, path, headers: { cookie: player.cookie, accept: 'application/json' } },
        true,
      );

    // Each logged-in player asks /api/me and /api/profile in turn, of both processes alternately.
    const play = async (player: Player): Promise<void> => {
      for (let turn = player.entryApp + 1; loading; turn += 1) {
        const app = turn % 2;
        const path = Math.floor(turn / 2) % 2 === 0 ? '/api/me' : '/api/profile';
        const sentMs = now();
        const answer = await get(player, apps[player.setting][app]!, path);
        const { status } = answer;
        const error = status === 200 ? '' : errorOf(answer);
        outcomes.push({ player, app, path, sentMs, endMs: now(), status, error, ...NO_REFRESH });
        await sleep(THINK_MS * (0.5 + Math.random()));
      }
    };

    const enter = async (setting: Setting, index: number): Promise<void> => {
      const openId = openIdOf(setting, index);
      const entryApp = index % 2;
      const code = sim.issueCode({ openId, redirectUri: BENCH_REDIRECT_URI });
      const sentMs = now();
      const answer = await send(
        agent,
        {
          port: apps[setting][entryApp]!.port,
          path: `/platform/callback?code=${encodeURIComponent(code)}`,
          headers: entryHeaders({ url: recorder.url }),
        },
        true,
      );
      const entered = answer.status === 303;
      const player: Player = {
        ...{ setting, openId, entryApp, sentMs, endMs: now(), entryStatus: answer.status },
        entryError: entered ? '' : errorOf(answer),
      };
      players.push(player);
      const session = entered ? sessionIn(answer.headers['set-cookie']) : undefined;
      if (session === undefined) return;
      player.cookie = session.cookie;
      player.sessionHash = hashSessionId(session.sessionId);
      const slots = bed.killedSlots;
      if (slots) {
        const inKilled = (key: string): boolean =>
          keySlot(key) >= slots[0] && keySlot(key) <= slots[1];
        player.keysOnKilledShard = {
          record: inKilled(recordKeyOf(TOKEN_PREFIX, session.sessionId)),
          session: inKilled(`${SESSION_PREFIX}${session.sessionId}`),
        };
      }
      await play(player);
    };

    const entering = (async () => {
      for (let index = 0; loading && index < PLAYERS_PER_SETTING; index += 1) {
        for (const setting of SETTINGS) loops.push(enter(setting, index));
        await sleep(ENTRY_INTERVAL_MS);
      }
    })();

    ctx.log(`${label}: load running; the master dies in ${warmupMs / 1000} s`);
    await sleep(warmupMs);
    loopDelay.disable();
    // The driver's event-loop delay (ms) up to the kill: a late timer delays requests and their timing.
    const driverDelay = { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 };
    const killMs = now();
    await bed.kill();
    const promoted = await bed.waitForPromotion();
    const promotedMs = now();
    ctx.log(
      `${label}: master killed at ${(killMs / 1000).toFixed(1)} s, ${promoted.port} promoted ${((promotedMs - killMs) / 1000).toFixed(1)} s later`,
    );
    await sleep(afterMs);
    loading = false;
    await entering;
    await Promise.all(loops);
    const endMs = now();

    // After the promotion settled: every player answered 303 asks /api/me of both processes,
    // eight players at a time.
    const slowFinal: string[] = [];
    const finalMs: Record<Setting, number[]> = { on: [], off: [] };
    const check = async (player: Player): Promise<void> => {
      player.finalStatuses = [];
      for (const app of apps[player.setting]) {
        const answer = await get(player, app, '/api/me');
        player.finalStatuses.push(answer.status);
        finalMs[player.setting].push(answer.ms);
        if (answer.ms > 2000)
          slowFinal.push(
            `${player.openId} ${app.name}: ${answer.status} after ${(answer.ms / 1000).toFixed(1)} s`,
          );
      }
    };
    const checked = players.filter((player) => player.cookie !== undefined);
    for (let at = 0; at < checked.length; at += 8)
      await Promise.all(checked.slice(at, at + 8).map(check));
    const finalLatency = SETTINGS.map(
      (setting) =>
        `${setting} p50 ${ms(p50(finalMs[setting]))} / max ${ms(Math.max(...finalMs[setting]))} ms`,
    ).join(', ');
    if (slowFinal.length > 0)
      ctx.log(`${label}: final /api/me slower than 2 s: ${slowFinal.join('; ')}`);
    ctx.log(
      `${label}: load ended at ${(endMs / 1000).toFixed(1)} s, final check done ${((now() - endMs) / 1000).toFixed(1)} s later (${finalLatency})`,
    );

    // A request carried a refresh when one of its player's refresh calls ran inside it.
    const calls = recorder.calls.map((call) => ({
      ...call,
      startMs: call.startMs - origin,
      endMs: call.endMs - origin,
    }));
    const refreshesOf = new Map<string, TokenCall[]>();
    for (const call of calls)
      if (call.grant === 'refresh_token' && call.openId !== undefined)
        refreshesOf.set(call.openId, [...(refreshesOf.get(call.openId) ?? []), call]);
    for (const outcome of outcomes) {
      const ofPlayer = refreshesOf.get(outcome.player.openId) ?? [];
      outcome.refreshed = ofPlayer.some(
        (call) => call.startMs >= outcome.sentMs && call.endMs <= outcome.endMs,
      );
      for (const call of ofPlayer)
        if (call.endMs <= outcome.sentMs)
          outcome.sinceRefreshMs = Math.min(outcome.sinceRefreshMs, outcome.sentMs - call.endMs);
    }
    for (const player of players) {
      const ends = (refreshesOf.get(player.openId) ?? []).map((call) => call.endMs);
      if (ends.length > 0) player.firstRefreshEndMs = Math.min(...ends);
    }

    const bySetting = {} as Record<Setting, SettingResult>;
    for (const setting of SETTINGS) {
      const metrics = new Map<string, number>();
      for (const app of apps[setting]) await scrapeMetrics(app.port, metrics);
      bySetting[setting] = {
        setting,
        players: players.filter((p) => p.setting === setting),
        outcomes: outcomes.filter((o) => o.player.setting === setting),
        tokenCalls: calls.filter((c) => c.openId?.startsWith(`${setting}-`) === true),
        metrics,
      };
    }
    const doneMs = now();
    for (const line of logs) line.atMs -= origin;
    return {
      ...{ client, topology, slowFinal, finalLatency, driverDelay, bySetting, logs },
      timeline: { killMs, promotedMs, endMs, doneMs },
      retiredBySimulator: sim.retiredTokenReuses,
      ...(bed.killedSlots ? { killedSlots: bed.killedSlots } : {}),
    };
  } finally {
    agent.destroy();
    const stopping = performance.now();
    await stopApps(running);
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    ctx.log(
      `${label}: processes and bed stopped in ${((performance.now() - stopping) / 1000).toFixed(1)} s`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// What a run shows

const NO_REFRESH = { refreshed: false, sinceRefreshMs: Infinity };
const seconds = (value: number): string => `${(value / 1000).toFixed(2)} s`;
const p50 = (values: number[]): number => percentile(Float64Array.from(values).sort(), 50);
const p99 = (values: number[]): number => percentile(Float64Array.from(values).sort(), 99);
const p50p99 = (values: number[]): string => `${ms(p50(values))} / ${ms(p99(values))}`;
const durationOf = (o: { sentMs: number; endMs: number }): number => o.endMs - o.sentMs;

/** What one bed lost, from one setting's players. */
type Losses = ReturnType<typeof lossesOf>;
/** Latencies (ms) before the kill: of one bed, or of several pooled. */
type Latencies = ReturnType<typeof latenciesOf>;

const lost = (p: Player): boolean => p.finalStatuses?.includes(401) === true;
/** Requests (and entries) sent MEASURE_FROM_MS into the load or later and answered before the kill. */
const measuredBefore = (result: SettingResult, { killMs }: Timeline) => ({
  requests: result.outcomes.filter((o) => o.endMs < killMs && o.sentMs >= MEASURE_FROM_MS),
  entries: result.players.filter(
    (p) => p.cookie !== undefined && p.endMs < killMs && p.sentMs >= MEASURE_FROM_MS,
  ),
});

function lossesOf(result: SettingResult, timeline: Timeline) {
  const answered = result.players.filter((p) => p.cookie !== undefined);
  const enteredBefore = answered.filter((p) => p.endMs < timeline.killMs);
  const enteredAfter = answered.filter((p) => p.endMs >= timeline.killMs);
  const entryFailures = result.players.filter((p) => p.entryStatus >= 500 && p.entryStatus !== 503);
  return {
    enteredBefore,
    enteredAfter,
    lostBefore: enteredBefore.filter(lost),
    lostAfter: enteredAfter.filter(lost),
    /** Answered 303, and the final /api/me answered neither 200 nor 401 on some process. */
    unsure: answered.filter((p) => !lost(p) && p.finalStatuses?.every((s) => s === 200) !== true),
    retired: result.tokenCalls.filter((c) => c.retired),
    unauthorized: result.outcomes.filter((o) => o.status === 401),
    serverErrors: [
      ...result.outcomes.filter((o) => o.status >= 500 && o.status !== 503),
      ...entryFailures.map((p): Outcome => {
        const { sentMs, endMs, entryStatus: status, entryError: error } = p;
        const at = { app: p.entryApp, path: '/platform/callback', sentMs, endMs };
        return { player: p, ...at, status, error, ...NO_REFRESH };
      }),
    ],
    unavailable: result.outcomes.filter((o) => o.status === 503),
    socketErrors: result.outcomes.filter((o) => o.status === 0),
    entriesRefused: tally(
      result.players.filter((p) => p.entryStatus !== 303),
      (p) => `${p.entryStatus === 0 ? 'socket' : p.entryStatus} ${p.entryError}`.trim(),
    ),
    /** The slowest requests before the kill that carried no refresh (the hot path's tail). */
    slowestFresh: measuredBefore(result, timeline)
      .requests.filter((o) => !o.refreshed)
      .sort((a, b) => durationOf(b) - durationOf(a))
      .slice(0, 3),
  };
}

function latenciesOf(beds: ReadonlyArray<{ result: SettingResult; timeline: Timeline }>) {
  const before = beds.flatMap((bed) => measuredBefore(bed.result, bed.timeline).requests);
  const steady = before.filter((o) => o.sentMs >= (o.player.firstRefreshEndMs ?? Infinity));
  const of = (outcomes: Outcome[]) => outcomes.map(durationOf);
  return {
    all: of(before),
    fresh: of(before.filter((o) => !o.refreshed)),
    refreshing: of(before.filter((o) => o.refreshed)),
    byKind: byKind(before),
    /** Sent after their player's first refresh: from there on ~2 s apart (see STEADY_NOTE). */
    steady: {
      all: of(steady),
      refreshing: of(steady.filter((o) => o.refreshed)),
      byKind: byKind(steady),
    },
    entry: beds.flatMap((bed) => measuredBefore(bed.result, bed.timeline).entries.map(durationOf)),
    platformRefresh: beds.flatMap(({ result, timeline }) =>
      result.tokenCalls
        .filter((c) => c.grant === 'refresh_token' && c.endMs < timeline.killMs)
        .map((c) => c.endMs - c.startMs),
    ),
  };
}

/**
 * Requests alike (see {@link likeForLike}): the route, and whether it carried a refresh, came
 * within a second of its player's latest refresh (the cache reads the new record again) or later.
 */
function byKind(outcomes: readonly Outcome[]): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  for (const o of outcomes) {
    const when = o.refreshed ? 'refresh' : o.sinceRefreshMs < 1000 ? 'within 1 s' : 'later';
    const key = `${o.path} ${when}`;
    groups.set(key, [...(groups.get(key) ?? []), durationOf(o)]);
  }
  return groups;
}

/** The kinds of request that carried no refresh: what a request with a usable token pays. */
const withoutRefresh = (kinds: Map<string, number[]>): Map<string, number[]> =>
  new Map([...kinds].filter(([key]) => !key.endsWith(' refresh')));

/**
 * on ÷ off of the p50, taken within each kind of request and averaged (geometric mean, weighted by
 * how many requests of the kind both groups made). The p50 of all requests falls between the
 * modes of a mix (~0.7 ms from memory, ~1 ms after a refresh, ~2 ms for the open-API route),
 * so a 1 % shift in the mix moves it by several per cent: in A/A runs (both groups durability off)
 * it read 0.98–1.05, this 0.97–1.01. Kinds with fewer than 20 requests in a group are left out.
 */
function likeForLike(on: Map<string, number[]>, off: Map<string, number[]>): number {
  let logSum = 0;
  let weight = 0;
  for (const [key, ours] of on) {
    const theirs = off.get(key);
    if (theirs === undefined || ours.length < 20 || theirs.length < 20) continue;
    const n = ours.length + theirs.length;
    logSum += n * Math.log(p50(ours) / p50(theirs));
    weight += n;
  }
  return weight === 0 ? Number.NaN : Math.exp(logSum / weight);
}

const kinds = (outcomes: readonly Outcome[]): string =>
  tallyList(
    tally(
      outcomes,
      (o) => `${o.status === 0 ? 'socket' : o.status}${o.error ? ` ${o.error}` : ''}`,
    ),
  );

const callLine = (call: TokenCall, at: (ms: number) => string): string => {
  const grant = { authorization_code: 'code exchange', refresh_token: 'refresh', other: 'other' };
  const error = call.error ? ` ${call.error}` : '';
  const retired = call.retired ? ' (retired token)' : '';
  return `${grant[call.grant]} ${at(call.startMs)}→${at(call.endMs)} ${call.status}${error}${retired}`;
};

/** The story of one lost player: entry, refresh calls around the kill, first 401, log lines. */
function lostPlayerLines(
  player: Player,
  result: SettingResult,
  { timeline, logs }: RunResult,
  maxLines: number,
): string[] {
  const at = (ms: number): string => `${((ms - timeline.killMs) / 1000).toFixed(3)} s`;
  const process = (app: number): string => (app === 0 ? 'A' : 'B');
  const calls = result.tokenCalls.filter(
    (c) => c.openId === player.openId && c.endMs > timeline.killMs - 4000,
  );
  const firstBad = result.outcomes.find((o) => o.player === player && o.status === 401);
  const mentions = (line: LogLine): boolean =>
    (line.text.includes(player.openId) ||
      (player.sessionHash !== undefined && line.text.includes(player.sessionHash))) &&
    line.atMs >= timeline.killMs - 3000;
  // What the process that answered the first 401 logged while it did.
  const whileBad = (line: LogLine): boolean =>
    firstBad !== undefined &&
    line.app === `${player.setting}${process(firstBad.app)}` &&
    line.atMs >= firstBad.sentMs &&
    line.atMs <= firstBad.endMs + 5;
  const lines = logs.filter((l) => (mentions(l) || whileBad(l)) && l.atMs <= timeline.doneMs);
  const keys = player.keysOnKilledShard;
  const shard = (on: boolean): string => (on ? 'the killed shard' : 'a live shard');
  const where =
    keys && `, token record on ${shard(keys.record)}, session on ${shard(keys.session)}`;
  return [
    `- \`${player.openId}\` (durability ${player.setting}${where ?? ''}): entry sent to process ${process(player.entryApp)} at ${at(player.sentMs)} from the kill, answered 303 at ${at(player.endMs)}; ` +
      `token calls from 4 s before the kill: ${calls.length === 0 ? 'none' : calls.map((c) => callLine(c, at)).join('; ')}; ` +
      `first 401: ${firstBad ? `${at(firstBad.sentMs)} on process ${process(firstBad.app)} (${firstBad.path}, ${firstBad.error})` : 'none during the load'}; final /api/me: ${player.finalStatuses?.join(' / ')}`,
    ...lines
      .slice(0, maxLines)
      .map((line) => `  - ${at(line.atMs)} ${line.app}: \`${line.text.slice(0, 300)}\``),
  ];
}

/** The package's warnings and errors (and re-asserts, logouts), grouped by message, from 1 s before the kill. */
function logSummary(logs: readonly LogLine[], setting: Setting, timeline: Timeline): string[] {
  const byMessage = new Map<string, { n: number; first: LogLine }>();
  for (const line of logs) {
    if (line.setting !== setting || line.atMs < timeline.killMs - 1000) continue;
    if (line.atMs > timeline.doneMs) continue;
    if (/player entered|tokens refreshed|token endpoint attempt/.test(line.text)) continue;
    // The message without the timestamp, the namespace's level and the fields.
    const message = line.text
      .replace(/^\S+Z\s+/, '')
      .replace(/\s*\{.*$/, '')
      .slice(0, 200);
    const seen = byMessage.get(message);
    if (seen) seen.n += 1;
    else byMessage.set(message, { n: 1, first: line });
  }
  return [...byMessage].map(
    ([message, { n, first }]) =>
      `- ${n} × \`${message}\` (first at ${((first.atMs - timeline.killMs) / 1000).toFixed(3)} s from the kill, ${first.app})`,
  );
}

/** The metric of a setting's processes summed over its keys that start with `prefix`. */
const metricOf = (result: SettingResult, prefix: string): number =>
  [...result.metrics].filter(([key]) => key.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0);
/** The mean of the processes' waits for a replica (ms), from the wait-duration histogram. */
const meanWaitMs = (result: SettingResult): number =>
  (metricOf(result, 'epl_replica_wait_duration_seconds_sum{') /
    metricOf(result, 'epl_replica_wait_duration_seconds_count{')) *
  1000;

/**
 * The figures of one topology and client, over its beds: the losses of each bed, the latencies of
 * all of them pooled, and each bed's own account.
 */
function report(runs: readonly RunResult[]): SectionResult {
  const { client, topology } = runs[0]!;
  const label = `failover (${client}, ${topology === 'sentinel' ? 'Sentinel' : 'Cluster'})`;
  const losses = runs.map((run) => ({
    on: lossesOf(run.bySetting.on, run.timeline),
    off: lossesOf(run.bySetting.off, run.timeline),
  }));
  const latencies = (setting: Setting, of: readonly RunResult[] = runs) =>
    latenciesOf(of.map((run) => ({ result: run.bySetting[setting], timeline: run.timeline })));
  const on = latencies('on');
  const off = latencies('off');
  const perBed = (ratioOf: (on: Latencies, off: Latencies) => number): string =>
    runs.length > 1
      ? ` (bed by bed: ${runs.map((run) => ratioOf(latencies('on', [run]), latencies('off', [run])).toFixed(3)).join(', ')})`
      : '';
  const lossLines = (setting: Setting): string =>
    losses
      .map(
        (bed, index) =>
          `${runs.length > 1 ? `bed ${index + 1}: ` : ''}logged out: ${bed[setting].lostBefore.length} of ${bed[setting].enteredBefore.length} answered before the kill, ${bed[setting].lostAfter.length} of ${bed[setting].enteredAfter.length} after; ` +
          `retired refresh tokens presented: ${bed[setting].retired.length}; 5xx other than 503: ${bed[setting].serverErrors.length}; 401 to logged-in players: ${bed[setting].unauthorized.length}`,
      )
      .join(' — ');
  const clean = (s: Losses): boolean =>
    [s.lostBefore, s.lostAfter, s.retired, s.serverErrors, s.unauthorized].every(
      (list) => list.length === 0,
    );
  const steadyLike = (a: Latencies, b: Latencies): number =>
    likeForLike(a.steady.byKind, b.steady.byKind);
  const freshLike = (a: Latencies, b: Latencies): number =>
    likeForLike(withoutRefresh(a.byKind), withoutRefresh(b.byKind));
  const likeRatio = steadyLike(on, off);
  const freshRatio = freshLike(on, off);
  const refreshAdded = p50(on.refreshing) - p50(off.refreshing);
  const entryAdded = p50(on.entry) - p50(off.entry);
  const share = (group: { all: number[]; refreshing: number[] }): string =>
    `${((group.refreshing.length / group.all.length) * 100).toFixed(1)} %`;
  const beds = runs.length > 1 ? `, ${runs.length} beds pooled` : '';
  const kindsCompared = [...on.steady.byKind.keys()]
    .sort()
    .filter((key) => off.steady.byKind.has(key))
    .map((key) => {
      const [ours, theirs] = [on.steady.byKind.get(key)!, off.steady.byKind.get(key)!];
      return `${key} ${ms(p50(ours))} vs ${ms(p50(theirs))} (${ours.length}/${theirs.length})`;
    });
  const timeouts = runs.reduce(
    (n, run) => n + metricOf(run.bySetting.on, 'epl_replica_waits{outcome=timeout'),
    0,
  );
  const waits = runs.reduce((n, run) => n + metricOf(run.bySetting.on, 'epl_replica_waits{'), 0);
  const figures: Figure[] = [
    {
      name: `${label}, durability on: logins lost, retired tokens presented, 5xx ≠ 503, 401s`,
      measured: lossLines('on'),
      target: '0, 0, 0, 0',
      met: losses.every((bed) => clean(bed.on)),
    },
    {
      name: `${label}, durability off (the same beds, other players): the same`,
      measured: lossLines('off'),
      target: 'reported (what durability prevents)',
    },
    {
      name: `${label}: p50 of logged-in requests before the kill, on ÷ off, players past their first refresh, like for like (per kind of request: route; with a refresh, within 1 s of one, later)${beds}`,
      measured: `${likeRatio.toFixed(3)}${perBed(steadyLike)} (${kindsCompared.join('; ')})`,
      target: '≤ 1.05',
      met: likeRatio <= 1.05,
    },
    {
      name: `${label}: the same over all their requests at once (p50 / p99 ms; share carrying a refresh; requests)`,
      measured: `${(p50(on.steady.all) / p50(off.steady.all)).toFixed(2)} (on ${p50p99(on.steady.all)}, ${share(on.steady)}, ${count(on.steady.all.length)}; off ${p50p99(off.steady.all)}, ${share(off.steady)}, ${count(off.steady.all.length)})`,
      target: 'reported: the p50 of a mix moves with the mix (see the row above)',
    },
    {
      name: `${label}: the same over every player (p50 / p99 ms; share carrying a refresh)`,
      measured: `${(p50(on.all) / p50(off.all)).toFixed(2)} (on ${p50p99(on.all)}, ${share(on)}; off ${p50p99(off.all)}, ${share(off)})`,
      target: `reported: ${STEADY_NOTE}`,
    },
    {
      name: `${label}: the hot path — p50 of requests before the kill that carried no refresh, every player, on ÷ off, like for like (route; within 1 s of a refresh or later)${beds}`,
      measured: `${freshRatio.toFixed(3)}${perBed(freshLike)} (all of them at once: on ${p50p99(on.fresh)}, off ${p50p99(off.fresh)} ms p50 / p99)`,
      target: '≤ 1.05 (a usable token never waits for a replica)',
      met: freshRatio <= 1.05,
    },
    {
      name: `${label}: latency durability adds to a refresh and to an entry (p50 on − off, before the kill)`,
      measured: `refresh +${ms(refreshAdded)} ms (${ms(p50(on.refreshing))} vs ${ms(p50(off.refreshing))}), entry +${ms(entryAdded)} ms (${ms(p50(on.entry))} vs ${ms(p50(off.entry))}); replication lag ${LAG_MS} ms; replica waits that timed out (answered on the primary alone): ${timeouts} of ${waits}; a wait for a replica (what a refresh's durable write and an entry wait for; a request with a usable token does not) took ${runs.map((run) => ms(meanWaitMs(run.bySetting.on))).join(' / ')} ms on average`,
      target: `≈ the lag (${LAG_MS} ms), not more`,
      met: refreshAdded <= LAG_MS * 1.25 && entryAdded <= LAG_MS * 1.25,
    },
  ];
  const markdown = runs.flatMap((run, index) =>
    bedMarkdown(
      run,
      losses[index]!,
      runs.length > 1 ? ` — bed ${index + 1} of ${runs.length}` : '',
    ),
  );
  return { figures, markdown };
}

/** One bed's account: its table, its slowest requests, the stories of lost players, its logs. */
function bedMarkdown(run: RunResult, losses: Record<Setting, Losses>, suffix: string): string[] {
  const { client, topology, timeline } = run;
  const label = `failover (${client}, ${topology === 'sentinel' ? 'Sentinel' : 'Cluster'})${suffix}`;
  const row = (setting: Setting): string[] => {
    const [s, result] = [losses[setting], run.bySetting[setting]];
    const l = latenciesOf([{ result, timeline }]);
    const waits = [...result.metrics]
      .filter(([key, n]) => key.startsWith('epl_replica') && !key.includes('duration') && n > 0)
      .map(([key, n]) => `${key.replace(/^epl_replica_/, '')}: ${count(n)}`)
      .join(', ');
    const refused = tallyList(s.entriesRefused);
    const unsure = s.unsure.map((p) => `${p.openId} ${p.finalStatuses?.join('/')}`).join(', ');
    const players = new Set(s.unauthorized.map((o) => o.player)).size;
    return [
      setting,
      `${s.enteredBefore.length} + ${s.enteredAfter.length}${refused ? ` (refused: ${refused})` : ''}`,
      `${s.lostBefore.length} + ${s.lostAfter.length}${unsure ? ` (neither 200 nor 401 at the end: ${unsure})` : ''}`,
      String(s.retired.length),
      `${s.unauthorized.length}${s.unauthorized.length ? ` (${players} players)` : ''}`,
      s.serverErrors.length ? `${s.serverErrors.length} (${kinds(s.serverErrors)})` : '0',
      `${s.unavailable.length}${s.unavailable.length ? ` (${kinds(s.unavailable)})` : ''}${s.socketErrors.length ? `; socket errors ${s.socketErrors.length}` : ''}`,
      count(result.outcomes.length),
      p50p99(l.all),
      p50p99(l.fresh),
      `${p50p99(l.refreshing)} (${l.refreshing.length})`,
      p50p99(l.entry),
      ms(p50(l.platformRefresh)),
      waits || '—',
    ];
  };
  const tail = (s: Losses): string =>
    s.slowestFresh
      .map(
        (o) =>
          `${ms(durationOf(o))} ms (${o.player.openId} ${o.path} on ${o.player.setting}${o.app === 0 ? 'A' : 'B'} at ${seconds(o.sentMs)}, ${o.status}; its entry answered at ${seconds(o.player.endMs)})`,
      )
      .join('; ');
  const markdown = [
    `### ${label}`,
    '',
    `Master killed (SIGKILL) ${seconds(timeline.killMs)} into the load${run.killedSlots ? ` (shard 0, slots ${run.killedSlots[0]}–${run.killedSlots[1]})` : ''}; ` +
      `the promotion seen by ${topology === 'sentinel' ? 'all three sentinels (and ROLE master)' : 'every live node (cluster_state:ok)'} ${seconds(timeline.promotedMs - timeline.killMs)} later; load until ${seconds(timeline.endMs)}. ` +
      `Retired refresh tokens presented, as the simulator counts them: ${run.retiredBySimulator}. ` +
      `The final check's GET /api/me (sequential, after the load): ${run.finalLatency}. ` +
      (run.slowFinal.length > 0
        ? `Final /api/me answers slower than 2 s (10 s: the driver gave up, status 0): ${run.slowFinal.join('; ')}. `
        : '') +
      `The driver's event-loop delay before the kill (it delays requests and their timing): p99 ${ms(run.driverDelay.p99)} ms, max ${ms(run.driverDelay.max)} ms.`,
    '',
    ...table(
      'durability | players answered 303 before + after the kill | logged out at the end, before + after | retired tokens presented | 401 during load | 5xx ≠ 503 | 503 | requests | before the kill p50 / p99 ms | no refresh p50 / p99 | with a refresh p50 / p99 (n) | entry p50 / p99 | platform refresh call p50 | replica waits, re-asserts (metrics)',
      SETTINGS.map(row),
    ),
    '',
    `Slowest requests before the kill without a refresh: on ${tail(losses.on)}; off ${tail(losses.off)}.`,
    '',
  ];
  if (topology === 'cluster') {
    const shard = (s: Losses): string => {
      const entered = [...s.enteredBefore, ...s.enteredAfter];
      const onShard = entered.filter(
        (p) => p.keysOnKilledShard?.record || p.keysOnKilledShard?.session,
      );
      return `${onShard.length} of ${entered.length}`;
    };
    markdown.push(
      `Players with their token record or session on the killed shard: on ${shard(losses.on)}, off ${shard(losses.off)}.`,
      '',
    );
  }
  const lostOf = (setting: Setting): Player[] => [
    ...losses[setting].lostBefore,
    ...losses[setting].lostAfter,
  ];
  if (lostOf('on').length + lostOf('off').length > 0) {
    markdown.push(
      `Players logged out${lostOf('on').length > 0 ? ' — **with durability on too**' : ''} (times from the kill; with durability on at most 5 and their log lines, with it off the first 2, 3 lines each):`,
      '',
      ...SETTINGS.flatMap((setting) =>
        lostOf(setting)
          .slice(0, setting === 'on' ? 5 : 2)
          .flatMap((p) =>
            lostPlayerLines(p, run.bySetting[setting], run, setting === 'on' ? 14 : 3),
          ),
      ),
      '',
    );
  }
  for (const setting of SETTINGS) {
    const lines = logSummary(run.logs, setting, timeline);
    if (lines.length > 0)
      markdown.push(
        `What the durability-${setting} processes logged from 1 s before the kill (entries, refreshes and token calls left out), by message:`,
        '',
        ...lines.slice(0, 15),
        ...(lines.length > 15 ? [`- … ${lines.length - 15} more messages`] : []),
        '',
      );
  }
  return markdown;
}

export async function runFailover(
  ctx: BenchContext,
  clients: readonly ClientChoice[],
): Promise<SectionResult[]> {
  const topologies = (process.env.BENCH_FAILOVER_TOPOLOGIES ?? 'sentinel,cluster')
    .split(',')
    .map((name) => name.trim()) as Topology[];
  if (topologies.some((t) => t !== 'sentinel' && t !== 'cluster'))
    throw new TypeError('BENCH_FAILOVER_TOPOLOGIES must list sentinel and/or cluster.');
  const results: SectionResult[] = [];
  const started = performance.now();
  const beds = bedsOf(ctx.quick);
  const { warmupMs, afterMs } = timingOf(ctx.quick);
  for (const topology of topologies)
    for (const client of clients) {
      const runs: RunResult[] = [];
      // Which setting's processes start first alternates from bed to bed.
      for (let bed = 0; bed < beds; bed += 1)
        runs.push(await runOnce(ctx, client, topology, bed % 2 === 0 ? SETTINGS : ['off', 'on']));
      results.push(report(runs));
    }
  const intro = [
    `## failover: a Redis master killed under load, the replica ${LAG_MS} ms behind`,
    '',
    ...(CONTROL
      ? [
          '**A control run (BENCH_FAILOVER_CONTROL=1): both groups run with durability off.** The "on" group is a second "off" group; its ratios show how far two groups alike drift apart here, and its loss counts are what durability off loses.',
          '',
        ]
      : []),
    `Layout: ${beds} bed${beds > 1 ? 's' : ''} per topology and client, one after the other, the latency figures over their requests pooled and each bed's own figures below; per bed a fresh failover bed (test/helpers/failover-bed.ts): Sentinel — a primary, one replica whose replication stream runs ${LAG_MS} ms behind (a delaying TCP proxy), three sentinels; Cluster — three masters with one such replica each; the delaying proxies (on the Cluster, each node announces its proxy's port: all client traffic passes through them) run in a process of their own, so the driver measures latency without relaying Redis traffic; ` +
      `four processes of the example game backend (\`example-app/server.ts\`, as \`npm run example\` starts it, with REDIS_SENTINELS + REDIS_SENTINEL_NAME or REDIS_CLUSTER_NODES and REDIS_CLIENT): two with durability on (the package's default, the example unchanged) and two with \`durability: false\` (bench/apps/example-durability.ts, a preload read only by the bench), side by side on the same bed, each pair with players of its own. ` +
      `The platform: the simulator (in the driver's process, behind a recording proxy that tells which player each token call was for) with refresh-token rotation and ${ACCESS_TOKEN_SECONDS} s access tokens, which the example refreshes 60 s before their end: a blocking refresh about every 2 s per player. ` +
      `A new player enters every ${ENTRY_INTERVAL_MS} ms per setting (a code from the simulator, the callback on one process of the pair) all along; each logged-in player asks GET /api/me and /api/profile in turn, of both processes alternately, ${THINK_MS / 2}–${(THINK_MS * 3) / 2} ms apart. ` +
      `After ${warmupMs / 1000} s the master (Sentinel: the primary; Cluster: shard 0's) is SIGKILLed; the load goes on ${afterMs / 1000} s past the promotion. Then every player answered 303 asks GET /api/me of both processes of its pair: a 401 there is a login lost. ` +
      `"Before the kill" latencies are of requests (and entries) sent ${MEASURE_FROM_MS / 1000} s or more into the load and answered before the kill; a request "with a refresh" is one during which a refresh call of its player ran at the platform. The section took ${((performance.now() - started) / 1000).toFixed(0)} s. ` +
      'Everything shares a 2-core machine (the bed, four app processes, the driver, the simulator): latencies are noisy, the loss counts are not.',
    '',
  ];
  return [
    {
      figures: results.flatMap((r) => r.figures),
      markdown: [...intro, ...results.flatMap((r) => r.markdown)],
    },
  ];
}
