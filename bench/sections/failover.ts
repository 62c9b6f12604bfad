// Section "failover" (issue #43, docs/durability.md): a Redis master whose replica runs 1 s behind
// is SIGKILLed under load beside four example processes, two with durability on and two off: what
// each pair lost, and what durability adds to its latencies.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator } from '../../lib/simulator';
import { startClusterBed, startSentinelBed } from '../../test/helpers/failover-bed';
import { exampleClient, type ClientChoice } from '../apps/session-stack';
import { hostList, startExample, stopApps, type AppProcess } from '../lib/app-process';
import { asPlayer, errorOf, inFlight, keepAliveAgent, send } from '../lib/load';
import { startPlatformRecorder, type TokenCall } from '../lib/platform-recorder';
import { table, tally, tallyList, type BenchContext, type Figure } from '../lib/report';
import type { SectionResult } from '../lib/report';
import { tryEnter } from '../lib/sessions';
import { BENCH_REDIRECT_URI } from '../lib/settings';
import { count, median, ms } from '../lib/stats';

const env = process.env;
/** How far the replica's replication stream runs behind its master. */
const LAG_MS = Number(env.BENCH_FAILOVER_LAG_MS ?? 1000);
/** Both groups durability off (an A/A run): how far two groups alike drift apart here. */
const CONTROL = env.BENCH_FAILOVER_CONTROL === '1';
const ACCESS_TOKEN_SECONDS = 62;
/** A new player per durability setting this often, all along. */
const ENTRY_INTERVAL_MS = 250;
/** Between a player's requests: THINK_MS × (0.5 … 1.5). */
const THINK_MS = 250;
/** Why the p50 target is taken over players past their first refresh. */
const STEADY_NOTE =
  "an entry waits for a replica after the exchange, so its player's first refresh comes ~the lag sooner: the 'on' players carry more refreshes per request until then";
/** Latencies before the kill count from here on (the processes' first seconds are their slowest). */
const MEASURE_FROM_MS = 3000;
const PLAYERS_PER_SETTING = 400;
const DURABILITY_SWITCH = join(__dirname, '..', 'apps', 'example-durability.ts');

type Topology = 'sentinel' | 'cluster';
type Setting = 'on' | 'off';
const SETTINGS: readonly Setting[] = ['on', 'off'];

/** An entry through one of the pair's processes, and the player's GET /api/me statuses after the run. */
interface Player {
  setting: Setting;
  openId: string;
  entryApp: number;
  sentMs: number;
  endMs: number;
  entryStatus: number;
  entryError: string;
  cookie?: string;
  finalStatuses?: number[];
  /** When its first refresh call at the platform ended (ms from the load's start). */
  firstRefreshEndMs?: number;
}

/** A request; `refreshed`: a refresh of its player ran at the platform while it was in flight. */
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

/** One setting's side of a bed; `killMs`: when its master was killed. */
interface SettingResult {
  killMs: number;
  players: Player[];
  outcomes: Outcome[];
  tokenCalls: TokenCall[];
  metrics: Map<string, number>;
}
type Env = Record<string, string>;
type RunResult = Awaited<ReturnType<typeof runOnce>>;

/** The bed of one run: what the example is told, and the failover. */
async function startBed(topology: Topology) {
  const options = { replicationDelayMs: LAG_MS, proxiesInChildProcess: true };
  if (topology === 'sentinel') {
    const bed = await startSentinelBed(options);
    return {
      env: { REDIS_SENTINELS: hostList(bed.sentinels), REDIS_SENTINEL_NAME: bed.masterName } as Env,
      kill: () => bed.killPrimary(),
      waitForPromotion: () => bed.waitForPromotion(30_000),
      stop: () => bed.stop(),
      killed: 'the primary',
    };
  }
  const bed = await startClusterBed(options);
  const [from, to] = bed.masters[0]!.slots;
  return {
    env: { REDIS_CLUSTER_NODES: hostList(bed.nodes) } as Env,
    kill: () => bed.killMaster(0),
    waitForPromotion: () => bed.waitForPromotion(0, 30_000),
    stop: () => bed.stop(),
    killed: `shard 0's master, slots ${from}–${to}`,
  };
}

/** The simulator's players: a set of its own for each durability setting. */
const openIdOf = (setting: Setting, index: number): string =>
  `${setting}-${String(index).padStart(4, '0')}`;

/** A line of the package's failover metrics: its name, labels and value. */
const METRIC =
  /^(epl_replica_waits|epl_replica_reasserts|epl_refresh_failures|epl_replica_wait_duration_seconds_(?:sum|count))\w*(?:\{([^}]*)\})? ([\d.e+-]+)/;

/** Sums the package's failover metrics (`epl_replica_*`, `epl_refresh_failures`) of one process. */
async function scrapeMetrics(port: number, into: Map<string, number>): Promise<void> {
  const answer = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
  if (answer?.ok !== true) return;
  for (const line of (await answer.text()).split('\n')) {
    const match = METRIC.exec(line);
    if (!match) continue;
    const labels = (match[2] ?? '').split(',').filter((pair) => /^(outcome|code)=/.test(pair));
    const key = `${match[1]}{${labels.join(',').replace(/"/g, '')}}`;
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
  const stops: Array<() => Promise<unknown>> = [];
  const apps: Record<Setting, AppProcess[]> = { on: [], off: [] };
  const agent = keepAliveAgent(256);
  const label = `failover (${client}, ${topology})`;
  try {
    const bed = await startBed(topology);
    stops.push(() => bed.stop());
    const players = SETTINGS.flatMap((setting) =>
      Array.from({ length: PLAYERS_PER_SETTING }, (_, index) => ({
        openId: openIdOf(setting, index),
        nickname: `Player ${setting} ${index}`,
        scope: ['user_info', 'basic_actions'],
      })),
    );
    const lifetime = { accessTokenLifetimeSeconds: ACCESS_TOKEN_SECONDS };
    const sim = await startSimulator({ rotateRefreshTokens: true, ...lifetime, players });
    stops.push(() => sim.close());
    const recorder = await startPlatformRecorder(sim.url);
    stops.push(() => recorder.close());
    ctx.log(`${label}: bed up; starting 4 example processes`);
    // Started in turn (on, off, on, off; off first every other bed: a process keeps the speed it
    // was born with), one at a time: parallel starts thrash 2 cores.
    for (const name of ['A', 'B'])
      for (const setting of order) {
        const app = await startExample(
          `example (durability ${setting}, ${setting}${name})`,
          {
            ...{ ...bed.env, REDIS_URL: '', HOST: '127.0.0.1', NODE_ENV: '' },
            REDIS_CLIENT: exampleClient(client),
            ...{ PLATFORM_AUTH_URL: recorder.url, PLATFORM_ORIGINS: recorder.url },
            ...{ PLATFORM_REDIRECT_URI: BENCH_REDIRECT_URI, ENTRY_FAILURE_LIMIT: '0' },
            BENCH_DURABILITY: CONTROL ? 'off' : setting,
          },
          { preload: [DURABILITY_SWITCH], echo: false },
        );
        apps[setting].push(app);
      }
    const entered: Player[] = [];
    const outcomes: Outcome[] = [];
    const loops: Promise<void>[] = [];
    let loading = true;
    const origin = performance.now();
    const now = (): number => performance.now() - origin;
    const get = (player: Player, app: AppProcess, path = '/api/me') =>
      send(agent, asPlayer(app.port, player.cookie!, path), true);
    // Each logged-in player asks /api/me and /api/profile in turn, of both processes alternately.
    const play = async (player: Player): Promise<void> => {
      for (let turn = player.entryApp + 1; loading; turn += 1) {
        const [app, path] = [turn % 2, turn % 4 < 2 ? '/api/me' : '/api/profile'];
        const sentMs = now();
        const answer = await get(player, apps[player.setting][app]!, path);
        const { status } = answer;
        const error = status === 200 ? '' : errorOf(answer);
        outcomes.push({ player, app, path, sentMs, endMs: now(), status, error, ...NO_REFRESH });
        await sleep(THINK_MS * (0.5 + Math.random()));
      }
    };
    const enter = async (setting: Setting, index: number): Promise<void> => {
      const [openId, entryApp, sentMs] = [openIdOf(setting, index), index % 2, now()];
      const port = apps[setting][entryApp]!.port;
      const { answer, session } = await tryEnter(agent, sim, port, openId, recorder);
      const player: Player = {
        ...{ setting, openId, entryApp, sentMs, endMs: now(), entryStatus: answer.status },
        ...{ entryError: session ? '' : errorOf(answer), cookie: session?.cookie },
      };
      entered.push(player);
      if (session !== undefined) await play(player);
    };
    const entering = (async () => {
      for (let index = 0; loading && index < PLAYERS_PER_SETTING; index += 1) {
        for (const setting of SETTINGS) loops.push(enter(setting, index));
        await sleep(ENTRY_INTERVAL_MS);
      }
    })();
    ctx.log(`${label}: load running; the master dies in ${warmupMs / 1000} s`);
    await sleep(warmupMs);
    const killMs = now();
    await bed.kill();
    const promoted = await bed.waitForPromotion();
    const promotedMs = now();
    ctx.log(`${label}: ${promoted.port} promoted ${seconds(promotedMs - killMs)} after the kill`);
    await sleep(afterMs);
    loading = false;
    await entering;
    await Promise.all(loops);
    const endMs = now();
    // After the promotion settled: every player answered 303 asks /api/me of both processes,
    // eight players at a time.
    const loggedIn = entered.filter((player) => player.cookie !== undefined);
    await inFlight(8, async (i) => {
      const player = loggedIn[i];
      if (player === undefined) return false;
      player.finalStatuses = [];
      for (const app of apps[player.setting])
        player.finalStatuses.push((await get(player, app)).status);
    });
    // A request carried a refresh when one of its player's refresh calls ran inside it.
    const calls = recorder.calls.map((call) => ({
      ...call,
      ...{ startMs: call.startMs - origin, endMs: call.endMs - origin },
    }));
    const refreshesOf = new Map<string, TokenCall[]>();
    for (const call of calls)
      if (call.grant === 'refresh_token' && call.openId !== undefined)
        refreshesOf.set(call.openId, [...(refreshesOf.get(call.openId) ?? []), call]);
    for (const outcome of outcomes)
      for (const call of refreshesOf.get(outcome.player.openId) ?? []) {
        if (call.startMs >= outcome.sentMs && call.endMs <= outcome.endMs) outcome.refreshed = true;
        if (call.endMs <= outcome.sentMs)
          outcome.sinceRefreshMs = Math.min(outcome.sinceRefreshMs, outcome.sentMs - call.endMs);
      }
    for (const player of entered) {
      const ends = (refreshesOf.get(player.openId) ?? []).map((call) => call.endMs);
      if (ends.length > 0) player.firstRefreshEndMs = Math.min(...ends);
    }
    const bySetting = {} as Record<Setting, SettingResult>;
    for (const setting of SETTINGS) {
      const metrics = new Map<string, number>();
      for (const app of apps[setting]) await scrapeMetrics(app.port, metrics);
      bySetting[setting] = {
        killMs,
        players: entered.filter((p) => p.setting === setting),
        outcomes: outcomes.filter((o) => o.player.setting === setting),
        tokenCalls: calls.filter((c) => c.openId?.startsWith(`${setting}-`) === true),
        metrics,
      };
    }
    return {
      ...{ client, topology, bySetting, killed: bed.killed },
      timeline: { killMs, promotedMs, endMs },
      retiredBySimulator: sim.retiredTokenReuses,
    };
  } finally {
    agent.destroy();
    await stopApps([...apps.on, ...apps.off]);
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// What a run shows

const timingOf = (quick: boolean): { warmupMs: number; afterMs: number } =>
  quick ? { warmupMs: 6000, afterMs: 5000 } : { warmupMs: 20_000, afterMs: 10_000 };
const NO_REFRESH = { refreshed: false, sinceRefreshMs: Infinity };
const seconds = (value: number): string => `${(value / 1000).toFixed(2)} s`;
const p50p99 = (values: number[]): string => `${ms(median(values))} / ${ms(median(values, 99))}`;
const durationOf = (o: { sentMs: number; endMs: number }): number => o.endMs - o.sentMs;

type Losses = ReturnType<typeof lossesOf>;
type Latencies = ReturnType<typeof latenciesOf>;

const lost = (p: Player): boolean => p.finalStatuses?.includes(401) === true;
/** Requests (and entries) sent MEASURE_FROM_MS into the load or later and answered before the kill. */
const measuredBefore = ({ outcomes, players, killMs }: SettingResult) => ({
  requests: outcomes.filter((o) => o.endMs < killMs && o.sentMs >= MEASURE_FROM_MS),
  entries: players.filter(
    (p) => p.cookie !== undefined && p.endMs < killMs && p.sentMs >= MEASURE_FROM_MS,
  ),
});

function lossesOf({ players, outcomes, tokenCalls, killMs }: SettingResult) {
  const answered = players.filter((p) => p.cookie !== undefined);
  const [enteredBefore, enteredAfter] = [
    answered.filter((p) => p.endMs < killMs),
    answered.filter((p) => p.endMs >= killMs),
  ];
  const failedEntries = players.filter((p) => p.entryStatus >= 500 && p.entryStatus !== 503);
  return {
    ...{ enteredBefore, enteredAfter },
    lostBefore: enteredBefore.filter(lost),
    lostAfter: enteredAfter.filter(lost),
    /** Answered 303, and the final /api/me answered neither 200 nor 401 on some process. */
    unsure: answered.filter((p) => !lost(p) && p.finalStatuses?.every((s) => s === 200) !== true),
    retired: tokenCalls.filter((c) => c.retired),
    unauthorized: outcomes.filter((o) => o.status === 401),
    serverErrors: [
      ...outcomes.filter((o) => o.status >= 500 && o.status !== 503),
      ...failedEntries.map((p): Pick<Outcome, 'status' | 'error'> => ({
        ...{ status: p.entryStatus, error: p.entryError },
      })),
    ],
    unavailable: outcomes.filter((o) => o.status === 503),
    socketErrors: outcomes.filter((o) => o.status === 0),
    entriesRefused: tally(
      players.filter((p) => p.entryStatus !== 303),
      (p) => `${p.entryStatus === 0 ? 'socket' : p.entryStatus} ${p.entryError}`.trim(),
    ),
  };
}

function latenciesOf(beds: readonly SettingResult[]) {
  const before = beds.flatMap((bed) => measuredBefore(bed).requests);
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
    entry: beds.flatMap((bed) => measuredBefore(bed).entries.map(durationOf)),
    platformRefresh: beds.flatMap(({ tokenCalls, killMs }) =>
      tokenCalls
        .filter((c) => c.grant === 'refresh_token' && c.endMs < killMs)
        .map((c) => c.endMs - c.startMs),
    ),
  };
}

/** Requests alike: the route, and whether it carried a refresh, came within 1 s of one, or later. */
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

/** on ÷ off of each kind's p50 (≥ 20 a side), weighted by count: a mix's p50 moves with the mix. */
function likeForLike(on: Map<string, number[]>, off: Map<string, number[]>): number {
  let logSum = 0;
  let weight = 0;
  for (const [key, ours] of on) {
    const theirs = off.get(key);
    if (theirs === undefined || ours.length < 20 || theirs.length < 20) continue;
    const n = ours.length + theirs.length;
    logSum += n * Math.log(median(ours) / median(theirs));
    weight += n;
  }
  return weight === 0 ? Number.NaN : Math.exp(logSum / weight);
}

const kinds = (outcomes: ReadonlyArray<Pick<Outcome, 'status' | 'error'>>): string =>
  tallyList(tally(outcomes, (o) => `${o.status || 'socket'}${o.error ? ` ${o.error}` : ''}`));

/** The metric of a setting's processes summed over its keys that start with `prefix`. */
const metricOf = (result: SettingResult, prefix: string): number =>
  [...result.metrics].filter(([key]) => key.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0);
/** The mean of the processes' waits for a replica (ms), from the wait-duration histogram. */
const meanWaitMs = (result: SettingResult): number =>
  (metricOf(result, 'epl_replica_wait_duration_seconds_sum{') /
    metricOf(result, 'epl_replica_wait_duration_seconds_count{')) *
  1000;

/** The figures of one topology and client: each bed's losses, the latencies of all pooled. */
function report(runs: readonly RunResult[]): SectionResult {
  const label = labelOf(runs[0]!);
  const losses = runs.map((run) => ({
    on: lossesOf(run.bySetting.on),
    off: lossesOf(run.bySetting.off),
  }));
  const latencies = (setting: Setting, of: readonly RunResult[] = runs) =>
    latenciesOf(of.map((run) => run.bySetting[setting]));
  const [on, off] = [latencies('on'), latencies('off')];
  const several = runs.length > 1;
  const perBed = (ratioOf: (on: Latencies, off: Latencies) => number): string =>
    several
      ? ` (bed by bed: ${runs.map((run) => ratioOf(latencies('on', [run]), latencies('off', [run])).toFixed(3)).join(', ')})`
      : '';
  const lossLines = (setting: Setting): string =>
    losses
      .map(({ [setting]: s }, index) =>
        [
          `${several ? `bed ${index + 1}: ` : ''}logged out: ${s.lostBefore.length} of ${s.enteredBefore.length} answered before the kill, ${s.lostAfter.length} of ${s.enteredAfter.length} after`,
          `retired refresh tokens presented: ${s.retired.length}`,
          `5xx other than 503: ${s.serverErrors.length}`,
          `401 to logged-in players: ${s.unauthorized.length}`,
        ].join('; '),
      )
      .join(' — ');
  const clean = (s: Losses): boolean =>
    [s.lostBefore, s.lostAfter, s.retired, s.serverErrors, s.unauthorized].every((l) => !l.length);
  const steadyLike = (a: Latencies, b: Latencies): number =>
    likeForLike(a.steady.byKind, b.steady.byKind);
  const freshLike = (a: Latencies, b: Latencies): number =>
    likeForLike(withoutRefresh(a.byKind), withoutRefresh(b.byKind));
  const [likeRatio, freshRatio] = [steadyLike(on, off), freshLike(on, off)];
  const refreshAdded = median(on.refreshing) - median(off.refreshing);
  const entryAdded = median(on.entry) - median(off.entry);
  const share = (group: { all: number[]; refreshing: number[] }): string =>
    `${((group.refreshing.length / group.all.length) * 100).toFixed(1)} %`;
  const beds = several ? `, ${runs.length} beds pooled` : '';
  const compared = [...on.steady.byKind.keys()].sort().filter((k) => off.steady.byKind.has(k));
  const kindsCompared = compared.map((key) => {
    const [ours, theirs] = [on.steady.byKind.get(key)!, off.steady.byKind.get(key)!];
    return `${key} ${ms(median(ours))} vs ${ms(median(theirs))} (${ours.length}/${theirs.length})`;
  });
  const onMetric = (prefix: string): number =>
    runs.reduce((n, run) => n + metricOf(run.bySetting.on, prefix), 0);
  const vs = (a: number[], b: number[]) => `${ms(median(a))} vs ${ms(median(b))}`;
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
      measured: `${(median(on.steady.all) / median(off.steady.all)).toFixed(2)} (on ${p50p99(on.steady.all)}, ${share(on.steady)}, ${count(on.steady.all.length)}; off ${p50p99(off.steady.all)}, ${share(off.steady)}, ${count(off.steady.all.length)})`,
      target: 'reported: the p50 of a mix moves with the mix (see the row above)',
    },
    {
      name: `${label}: the same over every player (p50 / p99 ms; share carrying a refresh)`,
      measured: `${(median(on.all) / median(off.all)).toFixed(2)} (on ${p50p99(on.all)}, ${share(on)}; off ${p50p99(off.all)}, ${share(off)})`,
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
      measured: `refresh +${ms(refreshAdded)} ms (${vs(on.refreshing, off.refreshing)}), entry +${ms(entryAdded)} ms (${vs(on.entry, off.entry)}); replication lag ${LAG_MS} ms; replica waits that timed out (answered on the primary alone): ${onMetric('epl_replica_waits{outcome=timeout')} of ${onMetric('epl_replica_waits{')}; a wait for a replica (what a refresh's durable write and an entry wait for; a request with a usable token does not) took ${runs.map((run) => ms(meanWaitMs(run.bySetting.on))).join(' / ')} ms on average`,
      target: `≈ the lag (${LAG_MS} ms), not more`,
      met: refreshAdded <= LAG_MS * 1.25 && entryAdded <= LAG_MS * 1.25,
    },
  ];
  const markdown = runs.flatMap((run, index) =>
    bedMarkdown(run, losses[index]!, several ? ` — bed ${index + 1} of ${runs.length}` : ''),
  );
  return { figures, markdown };
}

const labelOf = ({ client, topology }: RunResult): string =>
  `failover (${client}, ${topology === 'sentinel' ? 'Sentinel' : 'Cluster'})`;

/** One bed's account: its table (the first lost players named in it). */
function bedMarkdown(run: RunResult, losses: Record<Setting, Losses>, suffix: string): string[] {
  const { topology, timeline } = run;
  const label = labelOf(run) + suffix;
  const row = (setting: Setting): string[] => {
    const [s, result] = [losses[setting], run.bySetting[setting]];
    const l = latenciesOf([result]);
    const waits = [...result.metrics]
      .filter(([key, n]) => key.startsWith('epl_replica') && !key.includes('duration') && n > 0)
      .map(([key, n]) => `${key.replace(/^epl_replica_/, '')}: ${count(n)}`)
      .join(', ');
    const refused = tallyList(s.entriesRefused);
    const unsure = s.unsure.map((p) => `${p.openId} ${p.finalStatuses?.join('/')}`).join(', ');
    const lost = [...s.lostBefore, ...s.lostAfter].slice(0, 10).map((p) => p.openId);
    const players = new Set(s.unauthorized.map((o) => o.player)).size;
    const some = (list: unknown[], what: string): string => (list.length ? ` (${what})` : '');
    return [
      setting,
      `${s.enteredBefore.length} + ${s.enteredAfter.length}${refused ? ` (refused: ${refused})` : ''}`,
      `${s.lostBefore.length} + ${s.lostAfter.length}${lost.length ? ` (${lost.join(', ')})` : ''}${unsure ? ` (neither 200 nor 401 at the end: ${unsure})` : ''}`,
      String(s.retired.length),
      `${s.unauthorized.length}${some(s.unauthorized, `${players} players`)}`,
      `${s.serverErrors.length}${some(s.serverErrors, kinds(s.serverErrors))}`,
      `${s.unavailable.length}${some(s.unavailable, kinds(s.unavailable))}${s.socketErrors.length ? `; socket errors ${s.socketErrors.length}` : ''}`,
      count(result.outcomes.length),
      p50p99(l.all),
      p50p99(l.fresh),
      `${p50p99(l.refreshing)} (${l.refreshing.length})`,
      p50p99(l.entry),
      ms(median(l.platformRefresh)),
      waits || '—',
    ];
  };
  return [
    `### ${label}`,
    '',
    `Killed (SIGKILL): ${run.killed}, ${seconds(timeline.killMs)} into the load; ` +
      `the promotion seen by ${topology === 'sentinel' ? 'all three sentinels (and ROLE master)' : 'every live node (cluster_state:ok)'} ${seconds(timeline.promotedMs - timeline.killMs)} later; load until ${seconds(timeline.endMs)}. ` +
      `Retired refresh tokens presented, as the simulator counts them: ${run.retiredBySimulator}.`,
    '',
    ...table(
      'durability | players answered 303 before + after the kill | logged out at the end, before + after | retired tokens presented | 401 during load | 5xx ≠ 503 | 503 | requests | before the kill p50 / p99 ms | no refresh p50 / p99 | with a refresh p50 / p99 (n) | entry p50 / p99 | platform refresh call p50 | replica waits, re-asserts (metrics)',
      SETTINGS.map(row),
    ),
    '',
  ];
}

export async function runFailover(
  ctx: BenchContext,
  clients: readonly ClientChoice[],
): Promise<SectionResult[]> {
  const topologies = (env.BENCH_FAILOVER_TOPOLOGIES ?? 'sentinel,cluster')
    .split(',')
    .map((name) => name.trim()) as Topology[];
  if (topologies.some((t) => t !== 'sentinel' && t !== 'cluster'))
    throw new TypeError('BENCH_FAILOVER_TOPOLOGIES must list sentinel and/or cluster.');
  const results: SectionResult[] = [];
  const started = performance.now();
  // Beds per topology and client, their latencies pooled: a process keeps the speed it was born
  // with, and two beds put four processes behind each p50.
  const beds = Number(env.BENCH_FAILOVER_BEDS ?? (ctx.quick ? 1 : 2));
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
    `${CONTROL ? '**A control run (BENCH_FAILOVER_CONTROL=1): both groups with durability off**, an A/A run: its ratios show how far two groups alike drift apart here. ' : ''}${beds} bed${beds > 1 ? 's' : ''} per topology and client (test/helpers/failover-bed.ts), their latency figures pooled, each bed's own figures below; four example processes per bed, two with durability on and two off, players of their own; ${ACCESS_TOKEN_SECONDS} s access tokens with rotation; a player entering every ${ENTRY_INTERVAL_MS} ms per setting, each asking GET /api/me and /api/profile of both processes in turn, ${THINK_MS / 2}–${(THINK_MS * 3) / 2} ms apart; the master SIGKILLed after ${warmupMs / 1000} s, the load on ${afterMs / 1000} s past the promotion, then every player's GET /api/me on both processes: a 401 there is a login lost. ` +
      `"Before the kill": requests and entries sent ${MEASURE_FROM_MS / 1000} s or more into the load and answered before the kill; "with a refresh": a refresh call of its player ran at the platform meanwhile (bench/README.md). The section took ${((performance.now() - started) / 1000).toFixed(0)} s.`,
    '',
  ];
  const markdown = [...intro, ...results.flatMap((r) => r.markdown)];
  return [{ figures: results.flatMap((r) => r.figures), markdown }];
}
