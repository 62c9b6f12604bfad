// Benchmark 1, the hot path: a protected route with a fresh token behind the package, against the
// same app without it (express + express-session + connect-redis only), side by side in one run.
import { closedLoop, fixedRate, keepAliveAgent, statusList, type LoadResult, type Target } from './lib/load';
import { startBenchApp, stopBenchApps, type BenchApp } from './lib/processes';
import { cpuPerRequest, profileTables } from './lib/profile-tables';
import { PROFILE_DIR, profileWindow } from './lib/profile-window';
import { table, type BenchContext, type Figure, type SectionResult } from './lib/report';
import { enter, loginBaseline, playerOf, type BenchSession } from './lib/sessions';
import { count, ms, ratio, summarize } from './lib/stats';

const CONCURRENCY = 32;
const SESSIONS = 100;
const TARGET_RATIO = 0.85;
const TARGET_ADDED_P99_MS = 1;
/** The fixed-rate runs offer this share of the baseline's measured capacity. */
const FIXED_RATE_SHARE = 0.5;

type Variant = 'baseline' | 'package';
const VARIANTS: readonly Variant[] = ['baseline', 'package'];

interface Plan {
  warmUpMs: number;
  roundMs: number;
  rounds: number;
  fixedRounds: number;
  profileMs: number;
}

const targetsOf = (app: BenchApp, sessions: readonly BenchSession[]) => (index: number): Target => ({
  port: app.port,
  path: '/api/me',
  headers: { cookie: sessions[index % sessions.length]!.cookie, accept: 'application/json' },
});

const merge = (results: readonly LoadResult[]): { latencies: number[]; rps: number; statuses: Map<number, number> } => {
  const statuses = new Map<number, number>();
  for (const result of results) for (const [status, n] of result.statuses) statuses.set(status, (statuses.get(status) ?? 0) + n);
  const requests = results.reduce((sum, result) => sum + result.latencies.length, 0);
  const elapsed = results.reduce((sum, result) => sum + result.elapsedMs, 0);
  return { latencies: results.flatMap((result) => result.latencies), rps: (requests / elapsed) * 1000, statuses };
};

export async function runHotPath(ctx: BenchContext): Promise<SectionResult> {
  const plan: Plan = ctx.quick
    ? { warmUpMs: 1000, roundMs: 1500, rounds: 1, fixedRounds: 1, profileMs: 1500 }
    : { warmUpMs: 3000, roundMs: 5000, rounds: 3, fixedRounds: 2, profileMs: 5000 };
  const env = { REDIS_URL: ctx.redisUrl, SIM_URL: ctx.sim.url, KEY_PREFIX: 'hp:' };
  const apps: Record<Variant, BenchApp> = {
    baseline: await startBenchApp('baseline', env),
    package: await startBenchApp('package', env),
  };
  const agent = keepAliveAgent(CONCURRENCY);
  try {
    ctx.log(`hot path: logging in ${SESSIONS} sessions per app`);
    const sessions: Record<Variant, BenchSession[]> = { baseline: [], package: [] };
    for (let index = 0; index < SESSIONS; index += 1) {
      sessions.baseline.push(await loginBaseline(agent, apps.baseline.port, playerOf(index)));
      sessions.package.push(await enter(agent, ctx.sim, apps.package.port, playerOf(index)));
    }
    const next = (variant: Variant) => targetsOf(apps[variant], sessions[variant]);
    const saturate = (variant: Variant, durationMs: number): Promise<LoadResult> =>
      closedLoop({ agent, concurrency: CONCURRENCY, durationMs, next: next(variant) });

    for (const variant of VARIANTS) await saturate(variant, plan.warmUpMs);
    const rounds: Record<Variant, LoadResult[]> = { baseline: [], package: [] };
    for (let round = 0; round < plan.rounds; round += 1) {
      // Alternate which goes first, so a drift of the machine does not favour one side.
      const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const variant of order) {
        ctx.log(`hot path: round ${round + 1}/${plan.rounds}, ${variant}, ${CONCURRENCY} connections`);
        rounds[variant].push(await saturate(variant, plan.roundMs));
      }
    }
    const closed = { baseline: merge(rounds.baseline), package: merge(rounds.package) };
    const rate = Math.max(100, Math.floor((closed.baseline.rps * FIXED_RATE_SHARE) / 100) * 100);
    const fixedRounds: Record<Variant, LoadResult[]> = { baseline: [], package: [] };
    for (let round = 0; round < plan.fixedRounds; round += 1) {
      const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const variant of order) {
        ctx.log(`hot path: fixed rate ${rate} req/s, ${variant}`);
        fixedRounds[variant].push(await fixedRate({ agent, rate, durationMs: plan.roundMs, next: next(variant) }));
      }
    }
    const fixed = { baseline: merge(fixedRounds.baseline), package: merge(fixedRounds.package) };

    ctx.log('hot path: profiling both apps');
    const profiles = {
      baseline: await profileWindow(agent, apps.baseline.port, 'hot-path-baseline', () => saturate('baseline', plan.profileMs)),
      package: await profileWindow(agent, apps.package.port, 'hot-path-package', () => saturate('package', plan.profileMs)),
    };

    const closedSummary = { baseline: summarize(closed.baseline.latencies), package: summarize(closed.package.latencies) };
    const fixedSummary = { baseline: summarize(fixed.baseline.latencies), package: summarize(fixed.package.latencies) };
    const rpsRatio = closed.package.rps / closed.baseline.rps;
    const addedP99Closed = closedSummary.package.p99 - closedSummary.baseline.p99;
    const addedP99Fixed = fixedSummary.package.p99 - fixedSummary.baseline.p99;
    const figures: Figure[] = [
      {
        name: '1. Hot path req/s, package ÷ baseline (32 connections, 1 process each)',
        measured: `${ratio(rpsRatio)} (${count(closed.package.rps)} vs ${count(closed.baseline.rps)} req/s)`,
        target: `≥ ${TARGET_RATIO}`,
        met: rpsRatio >= TARGET_RATIO,
      },
      {
        name: '1. Hot path p99 added, at saturation (32 connections)',
        measured: `${addedP99Closed >= 0 ? '+' : ''}${ms(addedP99Closed)} ms (${ms(closedSummary.package.p99)} vs ${ms(closedSummary.baseline.p99)})`,
        target: `≤ +${TARGET_ADDED_P99_MS} ms`,
        met: addedP99Closed <= TARGET_ADDED_P99_MS,
      },
      {
        name: `1. Hot path p99 added, at a fixed ${count(rate)} req/s (${FIXED_RATE_SHARE * 100} % of baseline capacity)`,
        measured: `${addedP99Fixed >= 0 ? '+' : ''}${ms(addedP99Fixed)} ms (${ms(fixedSummary.package.p99)} vs ${ms(fixedSummary.baseline.p99)})`,
        target: `≤ +${TARGET_ADDED_P99_MS} ms`,
        met: addedP99Fixed <= TARGET_ADDED_P99_MS,
      },
    ];
    const perRound = (variant: Variant): string => rounds[variant].map((r) => count(r.requestsPerSecond)).join(' / ');
    const markdown = [
      '## 1. Hot path: a protected route with a fresh token',
      '',
      `Layout: **1 app process per variant** (both running, loaded one at a time, alternately), one redis-server, the load generator (node:http keep-alive agent) in the driver process. ` +
        `\`GET /api/me\` over ${SESSIONS} logged-in sessions in turn. Baseline: express + express-session + connect-redis, a route that reads the login from the session. ` +
        `Package: the same plus \`login.middleware()\` on RedisTokenStore (records in the clear), answering \`req.platformUser\`. ` +
        `Saturation: ${CONCURRENCY} connections, each sending its next request when the previous one is answered, ${plan.rounds} rounds of ${plan.roundMs / 1000} s per variant after a ${plan.warmUpMs / 1000} s warm-up. ` +
        `Fixed rate: ${count(rate)} req/s offered (${FIXED_RATE_SHARE * 100} % of the baseline's capacity), ${plan.fixedRounds} rounds of ${plan.roundMs / 1000} s, latency counted from when each request was due.`,
      '',
      ...table(
        ['variant', 'req/s per round', 'req/s (all rounds)', 'p50 ms', 'p99 ms', 'answers'],
        VARIANTS.map((variant) => [
          variant,
          perRound(variant),
          count(closed[variant].rps),
          ms(closedSummary[variant].p50),
          ms(closedSummary[variant].p99),
          statusList(closed[variant].statuses),
        ]),
      ),
      '',
      ...table(
        ['variant', `fixed ${count(rate)} req/s: p50 ms`, 'p90 ms', 'p99 ms', 'max ms', 'answers'],
        VARIANTS.map((variant) => [
          variant,
          ms(fixedSummary[variant].p50),
          ms(fixedSummary[variant].p90),
          ms(fixedSummary[variant].p99),
          ms(fixedSummary[variant].max),
          statusList(fixed[variant].statuses),
        ]),
      ),
      '',
      `Ratio of req/s: **${ratio(rpsRatio)}** (target ≥ ${TARGET_RATIO}). p99 added: **${ms(addedP99Closed)} ms** at saturation, **${ms(addedP99Fixed)} ms** at the fixed rate (target ≤ +${TARGET_ADDED_P99_MS} ms). ` +
        'At saturation a closed loop\'s latency is connections ÷ throughput, so its p99 restates the req/s ratio; the fixed-rate run is the latency a request sees below capacity.',
      '',
      `CPU per request, from the profiles: baseline ${cpuPerRequest(profiles.baseline.profile).toFixed(0)} µs, package ${cpuPerRequest(profiles.package.profile).toFixed(0)} µs: ` +
        `1 ÷ (1 + added ÷ baseline) = ${ratio(cpuPerRequest(profiles.baseline.profile) / cpuPerRequest(profiles.package.profile))}, the req/s ratio a CPU-bound process predicts.`,
      '',
      ...profileTables(profiles.baseline.profile, profiles.package.profile),
      '',
      `Profiles kept for Chrome DevTools in \`${PROFILE_DIR}\` (deleted with the temporary folder).`,
    ];
    return { figures, markdown };
  } finally {
    agent.destroy();
    await stopBenchApps([apps.baseline, apps.package]);
  }
}
