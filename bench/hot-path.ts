// Benchmark 1, the hot path: a protected route with a fresh token behind the package, and the
// example app's, against the same app without the package (express + express-session +
// connect-redis only), side by side in one run, with CPU per request and a CPU profile of each
// that shows where the package's extra time goes.
import { CAUSES, mergeProfiles, type ProfileSummary } from './lib/cpu-profile';
import {
  closedLoop,
  fixedRateInterleaved,
  keepAliveAgent,
  send,
  statusList,
  type LoadResult,
  type Target,
} from './lib/load';
import {
  startBenchApp,
  stopBenchApps,
  type BenchApp,
  cpuUsOf,
  type BenchAppEnv,
  type BenchAppKind,
} from './lib/processes';
import { medianUs, roundUs, timeOwnWork, type OwnTimeRound } from './lib/own-time';
import { cpuPerRequest, profileTables } from './lib/profile-tables';
import { PROFILE_DIR, profileWindow } from './lib/profile-window';
import { table, type BenchContext, type Figure, type SectionResult } from './lib/report';
import { enter, loginBaseline, playerOf, type BenchSession } from './lib/sessions';
import { count, median, ms, ratio, ratioFine, summarize, type LatencySummary } from './lib/stats';

const CONCURRENCY = 32;
const SESSIONS = 100;
const TARGET_RATIO = 0.95;
/** The example app against the same baseline: it carries more than the package (metrics, entry guards). */
const TARGET_EXAMPLE_RATIO = 0.9;
const TARGET_CPU_RATIO = 1.05;
const TARGET_ADDED_P99_MS = 1;
/** The package's own code per request (dist/ and what it calls, Redis and next() excluded). */
const TARGET_OWN_US = 5;
/**
 * The fixed-rate runs offer this share of the baseline's measured capacity, split evenly between
 * the three apps at once (interleaved): busy, not saturated.
 */
const FIXED_RATE_SHARE = 0.25;

/**
 * `cached` is the package with its record read answered from process memory after the first one
 * (bench/lib/cached-store.ts): a diagnostic of what the Redis read costs, not something to ship.
 */
type Variant = 'baseline' | 'package' | 'cached' | 'example';
type Apps = Partial<Record<Variant, BenchApp>>;
/** CPU profile windows per app (merged). */
const PROFILE_ROUNDS = 2;

/** The variants measured at a fixed rate and profiled. */
type FixedVariant = 'baseline' | 'package' | 'example';
const FIXED_VARIANTS: readonly FixedVariant[] = ['baseline', 'package', 'example'];

/** One variant's rounds, merged. */
interface Merged {
  latencies: number[];
  latency: LatencySummary;
  rps: number;
  statuses: Map<number, number>;
  perRound: number[];
  /** p99 of each round, to show how much of a p99 difference is round-to-round noise. */
  p99PerRound: number[];
  /** The app process's CPU time (user + system) per answered request over all rounds, µs. */
  cpuUsPerRequest: number;
}

/** A round's load and the app process's CPU time meanwhile. */
type Round = LoadResult & { cpuUs: number };

const signedMs = (value: number): string => `${value >= 0 ? '+' : ''}${ms(value)} ms`;
const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;

function merge(results: readonly Round[]): Merged {
  const statuses = new Map<number, number>();
  for (const result of results) {
    for (const [status, n] of result.statuses) {
      statuses.set(status, (statuses.get(status) ?? 0) + n);
    }
  }
  const latencies = results.flatMap((result) => result.latencies);
  const elapsed = results.reduce((sum, result) => sum + result.elapsedMs, 0);
  return {
    latencies,
    latency: summarize(latencies),
    rps: (latencies.length / elapsed) * 1000,
    statuses,
    perRound: results.map((result) => result.requestsPerSecond),
    p99PerRound: results.map((result) => summarize(result.latencies).p99),
    cpuUsPerRequest:
      results.reduce((sum, result) => sum + result.cpuUs, 0) / Math.max(1, latencies.length),
  };
}

/**
 * Runs every variant once per round, `rounds` times, rotating which goes first, so that a drift
 * of the shared machine touches every variant alike.
 */
async function rotate<V extends Variant>(
  variants: readonly V[],
  rounds: number,
  run: (variant: V, round: number) => Promise<Round>,
): Promise<Record<V, Merged>> {
  const results = new Map<V, Round[]>(variants.map((variant) => [variant, []]));
  for (let round = 0; round < rounds; round += 1) {
    for (let turn = 0; turn < variants.length; turn += 1) {
      const variant = variants[(round + turn) % variants.length]!;
      results.get(variant)!.push(await run(variant, round));
    }
  }
  return Object.fromEntries(variants.map((v) => [v, merge(results.get(v)!)])) as Record<V, Merged>;
}

/** "0.82–0.88": the ratio of each round's pair, package over the baseline of the same round. */
const pairRange = (over: Merged, under: Merged): string => {
  const ratios = over.perRound.map((rps, index) => rps / under.perRound[index]!);
  return `${ratio(Math.min(...ratios))}–${ratio(Math.max(...ratios))}`;
};

/** The causes table and a reading of it: what the package adds per request and what would cut it. */
function reading(
  base: ProfileSummary,
  pkg: ProfileSummary,
  ratios: { plain: number; pipelined: number; cached: number },
): string[] {
  const us = (summary: ProfileSummary, cause: keyof typeof CAUSES): number =>
    summary.causes.find((c) => c.name === CAUSES[cause])?.usPerRequest ?? 0;
  const added = cpuPerRequest(pkg) - cpuPerRequest(base);
  const redis = us(pkg, 'redis') - us(base, 'redis');
  const own = us(pkg, 'package');
  const gc = us(pkg, 'gc') - us(base, 'gc');
  const ownFrames = pkg.frames
    .filter((frame) => frame.area.startsWith('express-platform-login'))
    .slice(0, 3)
    .map((frame) => `\`${frame.name}\` ${frame.usPerRequest.toFixed(1)} µs`)
    .join(', ');
  const readShare =
    ratios.cached - ratios.plain >= 0.05
      ? 'the read is most of the gap'
      : 'this run does not separate the read from the noise (see the spread of the pairs)';
  return [
    `CPU per request from the profiles: baseline ${cpuPerRequest(base).toFixed(0)} µs, package ${cpuPerRequest(pkg).toFixed(0)} µs ` +
      `(a CPU-bound process then serves ${ratio(cpuPerRequest(base) / cpuPerRequest(pkg))} × the baseline's requests). By cause, each frame charged with what called it:`,
    '',
    ...table(
      ['cause', 'baseline µs/req', 'package µs/req', 'added'],
      (Object.keys(CAUSES) as (keyof typeof CAUSES)[]).map((cause) => [
        CAUSES[cause],
        us(base, cause).toFixed(1),
        us(pkg, cause).toFixed(1),
        signed(us(pkg, cause) - us(base, cause)),
      ]),
    ),
    '',
    `**Where the ${added.toFixed(0)} µs go.** ` +
      `(1) The Redis client, ${signed(redis)} µs: a record served from memory sends no command, so the package's requests send what the baseline's do (express-session's GET and EXPIRE); ` +
      'a record read from Redis (a miss) is one command more (a script answering the record and its PTTL: its socket write is the `writeUtf8String` frame below; syscalls are dear on this VM). ' +
      `With the read answered from process memory (the diagnostic row) the ratio is ${ratio(ratios.cached)} against ${ratio(ratios.plain)}: ${readShare}. ` +
      `Letting concurrent requests share socket writes (ioredis \`enableAutoPipelining: true\` in both apps) gave ${ratio(ratios.pipelined)} ` +
      `(${ratios.pipelined > ratios.plain + 0.03 ? 'it narrows the gap' : 'no clear gain'}). ` +
      `(2) The package's own code, ${own.toFixed(1)} µs (${ownFrames || 'no frame of lib/ sampled'}): the middleware, the store's read path and the handler's \`req.platformUser\`. ` +
      `(3) GC, ${signed(gc)} µs, from the allocations of both.`,
  ];
}

export async function runHotPath(ctx: BenchContext): Promise<SectionResult> {
  const plan = ctx.quick
    ? {
        warmUpMs: 1000,
        roundMs: 1000,
        rounds: 2,
        fixedRounds: 1,
        fixedMs: 1500,
        profileMs: 1500,
        ownRounds: 2,
      }
    : {
        warmUpMs: 3000,
        roundMs: 2500,
        rounds: 6,
        fixedRounds: 6,
        fixedMs: 5000,
        profileMs: 5000,
        ownRounds: 6,
      };
  const env: BenchAppEnv = { REDIS_URL: ctx.redisUrl, SIM_URL: ctx.sim.url, KEY_PREFIX: 'hp:' };
  const started: BenchApp[] = [];
  const start = async (kind: BenchAppKind, extra: Partial<BenchAppEnv> = {}): Promise<BenchApp> => {
    const app = await startBenchApp(kind, { ...env, ...extra });
    started.push(app);
    return app;
  };
  const agent = keepAliveAgent(CONCURRENCY);
  try {
    // Every process shares Redis, the key prefix and the session secret, so one set of sessions
    // per kind works on all of them.
    const apps: Apps = {
      baseline: await start('baseline'),
      package: await start('package'),
      cached: await start('package', { BENCH_RECORD_CACHE: '1' }),
      example: await start('example'),
    };
    const pipelinedApps: Apps = {
      baseline: await start('baseline', { BENCH_AUTO_PIPELINING: '1' }),
      package: await start('package', { BENCH_AUTO_PIPELINING: '1' }),
    };
    ctx.log(`hot path: logging in ${SESSIONS} sessions per kind of app`);
    const baselineSessions: BenchSession[] = [];
    const packageSessions: BenchSession[] = [];
    const exampleSessions: BenchSession[] = [];
    for (let index = 0; index < SESSIONS; index += 1) {
      baselineSessions.push(await loginBaseline(agent, apps.baseline!.port, playerOf(index)));
      packageSessions.push(await enter(agent, ctx.sim, apps.package!.port, playerOf(index)));
      exampleSessions.push(await enter(agent, ctx.sim, apps.example!.port, playerOf(index)));
    }
    const sessionsOf = (variant: Variant): BenchSession[] =>
      variant === 'baseline'
        ? baselineSessions
        : variant === 'example'
          ? exampleSessions
          : packageSessions;
    const targets =
      (set: Apps, variant: Variant) =>
      (index: number): Target => {
        const list = sessionsOf(variant);
        return {
          port: set[variant]!.port,
          path: '/api/me',
          headers: { cookie: list[index % list.length]!.cookie, accept: 'application/json' },
        };
      };
    const cpuUs = (port: number): Promise<number> => cpuUsOf(agent, port);
    /** A load window with the app's CPU time around it (two control requests, not counted). */
    const measured = async (port: number, load: () => Promise<LoadResult>): Promise<Round> => {
      const before = await cpuUs(port);
      const result = await load();
      return { ...result, cpuUs: (await cpuUs(port)) - before };
    };
    const saturate = (set: Apps, variant: Variant, durationMs: number): Promise<LoadResult> =>
      closedLoop({ agent, concurrency: CONCURRENCY, durationMs, next: targets(set, variant) });
    const warmUp = async (set: Apps): Promise<void> => {
      for (const variant of Object.keys(set) as Variant[]) {
        await saturate(set, variant, plan.warmUpMs);
      }
    };

    await warmUp(apps);
    // Fresh processes for every round: one process can run a few per cent faster or slower than
    // another of the same code for the whole of its life (where it landed in memory and on the
    // cores), which one-process-per-variant runs mistook for the code's effect.
    const freshProcesses = async (): Promise<void> => {
      const old = Object.values(apps);
      apps.baseline = await start('baseline');
      apps.package = await start('package');
      apps.cached = await start('package', { BENCH_RECORD_CACHE: '1' });
      apps.example = await start('example');
      await stopBenchApps(old);
      await warmUp(apps);
    };
    let currentRound = 0;
    const closed = await rotate(
      ['baseline', 'package', 'cached', 'example'],
      plan.rounds,
      async (variant, round) => {
        if (round !== currentRound) {
          currentRound = round;
          ctx.log(`hot path: fresh app processes for round ${round + 1}`);
          await freshProcesses();
        }
        ctx.log(
          `hot path: round ${round + 1}/${plan.rounds}, ${variant}, ${CONCURRENCY} connections`,
        );
        return measured(apps[variant]!.port, () => saturate(apps, variant, plan.roundMs));
      },
    );

    const rate = Math.max(
      50,
      Math.floor((closed.baseline.rps * FIXED_RATE_SHARE) / FIXED_VARIANTS.length / 10) * 10,
    );
    // The app's own event-loop delay per round tells a stalled app from a stalled load generator.
    const loopDelays: Record<FixedVariant, string[]> = { baseline: [], package: [], example: [] };
    const fixedRounds: Record<FixedVariant, Round[]> = { baseline: [], package: [], example: [] };
    for (let round = 0; round < plan.fixedRounds; round += 1) {
      ctx.log(
        `hot path: fixed rate ${rate} req/s to each app, interleaved, round ${round + 1}/${plan.fixedRounds}`,
      );
      const cpuBefore: Partial<Record<FixedVariant, number>> = {};
      for (const variant of FIXED_VARIANTS) {
        await send(agent, { port: apps[variant]!.port, path: '/bench/loop-delay' });
        cpuBefore[variant] = await cpuUs(apps[variant]!.port);
      }
      const results = await fixedRateInterleaved({
        agent,
        rate,
        durationMs: plan.fixedMs,
        next: {
          baseline: targets(apps, 'baseline'),
          package: targets(apps, 'package'),
          example: targets(apps, 'example'),
        },
      });
      for (const variant of FIXED_VARIANTS) {
        const port = apps[variant]!.port;
        const cpu = (await cpuUs(port)) - cpuBefore[variant]!;
        fixedRounds[variant].push({ ...results[variant], cpuUs: cpu });
        const answer = await send(agent, { port, path: '/bench/loop-delay' }, true);
        const delay = JSON.parse(answer.body) as { p99: number; max: number };
        loopDelays[variant].push(`${ms(delay.p99)} / ${ms(delay.max)}`);
      }
    }
    const fixed = {
      baseline: merge(fixedRounds.baseline),
      package: merge(fixedRounds.package),
      example: merge(fixedRounds.example),
    };

    // PROFILE_ROUNDS windows per app, the apps in turn, merged: drift of the machine over the
    // run falls on all three alike, and each figure is counted from twice the samples.
    const windows: Record<FixedVariant, { profile: ProfileSummary; requests: number }[]> = {
      baseline: [],
      package: [],
      example: [],
    };
    for (let round = 0; round < PROFILE_ROUNDS; round += 1) {
      for (const variant of FIXED_VARIANTS) {
        ctx.log(`hot path: profiling window ${round + 1}/${PROFILE_ROUNDS}, ${variant}`);
        const window = await profileWindow(
          agent,
          apps[variant]!.port,
          `hot-path-${variant}-${round + 1}`,
          () => saturate(apps, variant, plan.profileMs),
        );
        windows[variant].push({ profile: window.profile, requests: window.load.latencies.length });
      }
    }
    const profiles = {
      baseline: { profile: mergeProfiles(windows.baseline) },
      package: { profile: mergeProfiles(windows.package) },
      example: { profile: mergeProfiles(windows.example) },
    };

    await warmUp(pipelinedApps);
    const pipelined = await rotate(['baseline', 'package'], plan.rounds, (variant, round) => {
      ctx.log(`hot path: enableAutoPipelining round ${round + 1}/${plan.rounds}, ${variant}`);
      return measured(pipelinedApps[variant]!.port, () =>
        saturate(pipelinedApps, variant, plan.roundMs),
      );
    });

    // The same work timed where it runs, in processes of their own that read the clock around it
    // (kept out of the other figures): the profile charges by samples, this by the clock.
    ctx.log("hot path: the package's own work and the hand-written floor, timed in app processes");
    const own = await timeOwnWork({
      agent,
      rounds: plan.ownRounds,
      warmUpMs: plan.warmUpMs,
      roundMs: plan.roundMs,
      start: (floorOnly) =>
        start(
          'package',
          floorOnly ? { BENCH_TIME_OWN: '1', BENCH_FLOOR: '1' } : { BENCH_TIME_OWN: '1' },
        ),
      load: (app, durationMs) => saturate({ package: app }, 'package', durationMs),
    });
    const ownTimedUs = medianUs(own.package);
    const floorTimedUs = medianUs(own.floor);
    const ownMiddlewareUs = median(own.package.map((round) => round.middlewareNs / 1000));
    const ownUserUs = median(own.package.map((round) => round.userNs / 1000));
    const ownRequests = own.package.reduce((sum, round) => sum + round.requests, 0);
    const roundsList = (rounds: readonly OwnTimeRound[]): string =>
      rounds.map((round) => roundUs(round).toFixed(1)).join(', ');

    const rpsRatio = closed.package.rps / closed.baseline.rps;
    const cpuRatio = closed.package.cpuUsPerRequest / closed.baseline.cpuUsPerRequest;
    const exampleRatio = closed.example.rps / closed.baseline.rps;
    const exampleCpuRatio = closed.example.cpuUsPerRequest / closed.baseline.cpuUsPerRequest;
    const cachedRatio = closed.cached.rps / closed.baseline.rps;
    const pipelinedRatio = pipelined.package.rps / pipelined.baseline.rps;
    const addedP99Closed = closed.package.latency.p99 - closed.baseline.latency.p99;
    // Each round's apps saw the same moments of the machine (interleaved): the p99 added is the
    // median over rounds of that round's difference, so one disturbed round does not decide it.
    const addedPerRound = (variant: FixedVariant): number[] =>
      fixed[variant].p99PerRound.map((p99, index) => p99 - fixed.baseline.p99PerRound[index]!);
    const addedP99Fixed = median(addedPerRound('package'));
    const exampleP99Fixed = median(addedPerRound('example'));
    const pooledAdded = fixed.package.latency.p99 - fixed.baseline.latency.p99;
    const ownUs =
      profiles.package.profile.causes.find((cause) => cause.name === CAUSES.package)
        ?.usPerRequest ?? 0;
    const cpu = (merged: Merged): string => `${merged.cpuUsPerRequest.toFixed(0)} µs`;
    const figures: Figure[] = [
      {
        name: `1. Hot path req/s, package ÷ baseline (1 process each, ${CONCURRENCY} connections)`,
        measured:
          `${ratioFine(rpsRatio)} (${count(closed.package.rps)} vs ${count(closed.baseline.rps)} req/s; ` +
          `pairs of rounds ${pairRange(closed.package, closed.baseline)})`,
        target: `≥ ${TARGET_RATIO}`,
        met: rpsRatio >= TARGET_RATIO,
      },
      {
        name: '1. Hot path CPU per request, package ÷ baseline (app process, user + system, saturated rounds)',
        measured: `${ratioFine(cpuRatio)} (${cpu(closed.package)} vs ${cpu(closed.baseline)})`,
        target: `≤ ${TARGET_CPU_RATIO}`,
        met: cpuRatio <= TARGET_CPU_RATIO,
      },
      {
        name: `1. Hot path p99 added, at a fixed ${count(rate)} req/s to each of 3 apps, interleaved (${FIXED_RATE_SHARE * 100} % of baseline capacity together); median of the rounds' differences`,
        measured:
          `${signedMs(addedP99Fixed)} (rounds: ${addedPerRound('package').map(signedMs).join(', ')}; ` +
          `all rounds pooled ${ms(fixed.package.latency.p99)} vs ${ms(fixed.baseline.latency.p99)}, ${signedMs(pooledAdded)})`,
        target: `≤ +${TARGET_ADDED_P99_MS} ms`,
        met: addedP99Fixed <= TARGET_ADDED_P99_MS,
      },
      {
        name: `1. Hot path p99 added, saturated (${CONCURRENCY} connections)`,
        measured: `${signedMs(addedP99Closed)} (${ms(closed.package.latency.p99)} vs ${ms(closed.baseline.latency.p99)})`,
        target: `≤ +${TARGET_ADDED_P99_MS} ms`,
        met: addedP99Closed <= TARGET_ADDED_P99_MS,
      },
      {
        name: "1. Package's own code per request (CPU profile: the build, dist/, and what it calls, Redis and next() excluded)",
        measured: `${ownUs.toFixed(1)} µs`,
        target: `≤ ${TARGET_OWN_US} µs`,
        met: ownUs <= TARGET_OWN_US,
      },
      {
        name: "1. Package's own code per request, timed in the app process (login.middleware() from its call to its next(), and the handler's read of req.platformUser)",
        measured:
          `${ownTimedUs.toFixed(1)} µs, the median of ${own.package.length} rounds of a fresh process each (rounds: ${roundsList(own.package)}; ` +
          `middleware ${ownMiddlewareUs.toFixed(1)} µs, req.platformUser ${ownUserUs.toFixed(1)} µs; ${count(ownRequests)} requests); ` +
          `the hand-written floor (bench/lib/floor.ts: a Map lookup, a res.locals slot, a getter) ${floorTimedUs.toFixed(1)} µs (rounds: ${roundsList(own.floor)})`,
        target: `≤ ${TARGET_OWN_US} µs`,
        met: ownTimedUs <= TARGET_OWN_US,
      },
      {
        name: `1. Example app req/s ÷ the same baseline (example-app as \`npm run example\` starts it, on Redis; ${CONCURRENCY} connections)`,
        measured:
          `${ratioFine(exampleRatio)} (${count(closed.example.rps)} req/s; pairs ${pairRange(closed.example, closed.baseline)}); ` +
          `CPU per request ${ratioFine(exampleCpuRatio)} × (${cpu(closed.example)}); p99 added at ${count(rate)} req/s ${signedMs(exampleP99Fixed)}`,
        target: `≥ ${TARGET_EXAMPLE_RATIO}`,
        met: exampleRatio >= TARGET_EXAMPLE_RATIO,
      },
      {
        name: '1. Diagnostic: req/s ratio with the record read answered from memory (not shippable)',
        measured: `${ratioFine(cachedRatio)} (pairs ${pairRange(closed.cached, closed.baseline)}; CPU per request ${ratioFine(closed.cached.cpuUsPerRequest / closed.baseline.cpuUsPerRequest)} ×)`,
        target: 'what the Redis read costs',
      },
      {
        name: '1. Remedy tried: req/s ratio with ioredis enableAutoPipelining in both apps',
        measured: `${ratioFine(pipelinedRatio)} (pairs ${pairRange(pipelined.package, pipelined.baseline)})`,
        target: `(≥ ${TARGET_RATIO})`,
        met: pipelinedRatio >= TARGET_RATIO,
      },
    ];
    const saturatedRow = (name: string, merged: Merged): string[] => [
      name,
      merged.perRound.map(count).join(' / '),
      count(merged.rps),
      cpu(merged),
      ms(merged.latency.p50),
      ms(merged.latency.p99),
      merged.p99PerRound.map(ms).join(' / '),
      statusList(merged.statuses),
    ];
    const markdown = [
      '## 1. Hot path: a protected route with a fresh token',
      '',
      `Layout: **1 app process per variant** (all running, loaded one at a time in rotating order; the saturated rounds start fresh processes for every round, so that no variant keeps a lucky or unlucky process), one redis-server, the load generator (node:http keep-alive agent) in the driver process. ` +
        `\`GET /api/me\` over ${SESSIONS} logged-in sessions in turn. Baseline: express + express-session + connect-redis (no tokens), a route that reads the login from the session and answers JSON of the same shape. ` +
        'Package: the same plus `login.middleware()` on RedisTokenStore (records in the clear), answering `req.platformUser`. ' +
        'Example: example-app as `npm run example` starts it (its own ioredis client, RedisTokenStore, connect-redis, OpenTelemetry metrics with the Prometheus exporter), sessions entered through its callback. ' +
        'All on one ioredis client each with `maxRetriesPerRequest: 1, commandTimeout: 1000`. ' +
        `Saturated: ${CONCURRENCY} connections, each sending its next request when the previous one is answered, ${plan.rounds} rounds of ${plan.roundMs / 1000} s per variant after a ${plan.warmUpMs / 1000} s warm-up. ` +
        `Fixed rate: ${count(rate)} req/s offered to each of the baseline, the package and the example at once (${FIXED_RATE_SHARE * 100} % of the baseline's capacity together), interleaved in one schedule (one request to each in turn), so that a moment when the shared machine stalls delays all three alike; ${plan.fixedRounds} rounds of ${plan.fixedMs / 1000} s, latency counted from when each request was due. ` +
        "The p99 added is the median over rounds of each round's difference (package p99 − baseline p99 of the same round): the apps of a round saw the same machine, rounds did not, and a pooled p99 is decided by the worst round. " +
        "CPU per request: the app process's own `process.cpuUsage()` (user + system) around each round, divided by the requests it answered.",
      '',
      ...table(
        [
          'saturated',
          'req/s per round',
          'req/s (all rounds)',
          'CPU per request',
          'p50 ms',
          'p99 ms',
          'p99 per round',
          'answers',
        ],
        [
          saturatedRow('baseline', closed.baseline),
          saturatedRow('package', closed.package),
          saturatedRow('package, record read answered from memory (diagnostic)', closed.cached),
          saturatedRow('example app', closed.example),
          saturatedRow('baseline, enableAutoPipelining', pipelined.baseline),
          saturatedRow('package, enableAutoPipelining', pipelined.package),
        ],
      ),
      '',
      ...table(
        [
          `fixed ${count(rate)} req/s`,
          'CPU per request',
          'p50 ms',
          'p90 ms',
          'p99 ms',
          'p99 per round',
          'max ms',
          "app's event-loop delay p99 / max, per round (ms)",
          'answers',
        ],
        FIXED_VARIANTS.map((variant) => [
          variant === 'example' ? 'example app' : variant,
          cpu(fixed[variant]),
          ms(fixed[variant].latency.p50),
          ms(fixed[variant].latency.p90),
          ms(fixed[variant].latency.p99),
          fixed[variant].p99PerRound.map(ms).join(' / '),
          ms(fixed[variant].latency.max),
          loopDelays[variant].join('; '),
          statusList(fixed[variant].statuses),
        ]),
      ),
      '',
      `Ratio of req/s: **${ratioFine(rpsRatio)}** (target ≥ ${TARGET_RATIO}; each round's pair between ${pairRange(closed.package, closed.baseline)}); CPU per request **${ratioFine(cpuRatio)}** × (target ≤ ${TARGET_CPU_RATIO}). ` +
        `p99 added: **${signedMs(addedP99Fixed)}** at the fixed rate, ${signedMs(addedP99Closed)} saturated (target ≤ +${TARGET_ADDED_P99_MS} ms). ` +
        `Example app: **${ratioFine(exampleRatio)}** × the baseline's req/s (target ≥ ${TARGET_EXAMPLE_RATIO}). ` +
        "Saturated, a closed loop's latency is connections ÷ throughput, so its p99 restates the req/s ratio plus GC pauses; the fixed-rate run is the latency a request sees below capacity. " +
        "Compare the p99 differences with the spread of each variant's p99 per round: on a shared machine they are often of the same size.",
      '',
      '### Where the time goes (CPU profile)',
      '',
      ...reading(profiles.baseline.profile, profiles.package.profile, {
        plain: rpsRatio,
        pipelined: pipelinedRatio,
        cached: cachedRatio,
      }),
      '',
      ...profileTables(profiles.baseline.profile, profiles.package.profile),
      '',
      'The example app against the same baseline (its profile; what the example adds beyond the package: entry guards, metrics, its routes):',
      '',
      ...profileTables(profiles.baseline.profile, profiles.example.profile, 10, 'example app'),
      '',
      `Profiles (for Chrome DevTools) of this run: \`${PROFILE_DIR}\`.`,
    ];
    return { figures, markdown };
  } finally {
    agent.destroy();
    await stopBenchApps(started);
  }
}
