// Section "entry": callback requests per second end to end (code claim, code exchange with the
// simulator, new session, token record, 303), beside two hand-written callbacks as references.
import type { ClientChoice } from '../apps/session-stack';
import { startHarnessApp, startInTurn, stopApps, type AppProcess } from '../lib/app-process';
import type { HarnessKind } from '../lib/app-process';
import { closedLoop, keepAliveAgent, type LoadResult } from '../lib/load';
import { table, type BenchContext, type Figure, type SectionResult } from '../lib/report';
import { alternatingRounds } from '../lib/rounds';
import { BENCH_REDIRECT_URI } from '../lib/settings';
import { entryHeaders, playerOf } from '../lib/sessions';
import { count, ms, summarize } from '../lib/stats';

const CONCURRENCY = 16;
/** Issue 27's target against each hand-written callback. */
const TARGET_RATIO = 0.9;
/** Issue 44's target for the package as the example runs it (RedisSessionStore) ÷ the core jobs. */
const SESSIONS_TARGET_RATIO = 0.85;
/** Codes issued before each round: more than a round can use on this kind of machine. */
const CODES_PER_ROUND = 15_000;

/** The app of each variant (apps/harness-app.ts) and how the table names it. */
const VARIANT_APPS = {
  package: { kind: 'package', label: 'package callback' },
  'package-sessions': {
    kind: 'package',
    label: 'package callback on RedisSessionStore (as the example)',
  },
  naive: { kind: 'naive', label: 'hand-written callback (tokens in the session)' },
  'server-side': {
    kind: 'server-side',
    label: 'hand-written callback doing the core jobs (code claimed once, tokens in Redis)',
  },
} as const satisfies Record<string, { kind: HarnessKind; label: string }>;
type Variant = keyof typeof VARIANT_APPS;
const VARIANTS = Object.keys(VARIANT_APPS) as Variant[];
const REFERENCES = ['naive', 'server-side'] as const satisfies readonly Variant[];
/** One window of a variant: its load, the codes exchanged, and the app process's CPU over it. */
type Round = LoadResult & { exchanges: number; cpuUs: number };

export async function runEntry(ctx: BenchContext, client: ClientChoice): Promise<SectionResult> {
  const plan = ctx.quick
    ? { warmUpMs: 1000, roundMs: 1500, rounds: 1 }
    : { warmUpMs: 3000, roundMs: 3000, rounds: 8 };
  const agent = keepAliveAgent(CONCURRENCY);
  const run = async (app: AppProcess, durationMs: number): Promise<Round> => {
    // Codes are issued in advance so that issuing them is not part of what is measured.
    const codes = Array.from({ length: CODES_PER_ROUND }, (_, index) =>
      ctx.sim.issueCode({ openId: playerOf(index), redirectUri: BENCH_REDIRECT_URI }),
    );
    ctx.sim.resetCalls();
    const cpuBefore = await app.cpuUs();
    const headers = entryHeaders(ctx.sim);
    const entry = (code: string) => `/platform/callback?code=${encodeURIComponent(code)}`;
    const result = await closedLoop({
      ...{ agent, concurrency: CONCURRENCY, durationMs },
      next: (i) =>
        i < codes.length ? { port: app.port, path: entry(codes[i]!), headers } : undefined,
    });
    const cpuUs = (await app.cpuUs()) - cpuBefore;
    return { ...result, exchanges: ctx.sim.calls.authorization_code, cpuUs };
  };
  try {
    const windows = await alternatingRounds<Variant, AppProcess, Round>({
      variants: VARIANTS,
      rounds: plan.rounds,
      start: (order) =>
        startInTurn(order, (variant) =>
          startHarnessApp(VARIANT_APPS[variant].kind, {
            ...{ REDIS_URL: ctx.redisUrl, SIM_URL: ctx.sim.url, KEY_PREFIX: 'en:' },
            BENCH_REDIS_CLIENT: client,
            BENCH_SESSION_STORE: variant === 'package-sessions' ? 'memory' : undefined,
          }),
        ),
      stop: (apps) => stopApps(apps.values()),
      warmUp: (_, app) => run(app, plan.warmUpMs),
      window: (_, app) => run(app, plan.roundMs),
      log: (line) => ctx.log(`entry (${client}): ${line}`),
    });
    const rounds = Object.fromEntries(windows) as Record<Variant, Round[]>;
    const merged = (variant: Variant) => {
      const results = rounds[variant];
      const sum = (of: (round: Round) => number) => results.reduce((n, r) => n + of(r), 0);
      const [requests, elapsedMs] = [sum((r) => r.latencies.length), sum((r) => r.elapsedMs)];
      const statuses = new Map<number, number>();
      for (const [status, n] of results.flatMap((r) => [...r.statuses]))
        statuses.set(status, (statuses.get(status) ?? 0) + n);
      return {
        cpuUsPerEntry: sum((r) => r.cpuUs) / Math.max(1, requests),
        /** Share of one core the app process used over its windows. */
        coreUse: sum((r) => r.cpuUs) / Math.max(1, elapsedMs * 1000),
        rps: (requests / elapsedMs) * 1000,
        latency: summarize(results.flatMap((r) => r.latencies)),
        ...{ statuses, requests, exchanges: sum((r) => r.exchanges) },
      };
    };
    type Merged = ReturnType<typeof merged>;
    const result = Object.fromEntries(VARIANTS.map((v) => [v, merged(v)])) as Record<
      Variant,
      Merged
    >;
    const allRedirected = VARIANTS.every(
      (v) => result[v].requests > 0 && result[v].statuses.get(303) === result[v].requests,
    );
    const cpuOf = (variant: Variant): string => {
      const { cpuUsPerEntry: cpu, coreUse } = result[variant];
      return `${cpu.toFixed(0)} µs (${(coreUse * 100).toFixed(0)} % of a core)`;
    };
    const against = (reference: Variant, variant: Variant = 'package'): Figure => {
      const ours = result[variant];
      const theirs = result[reference];
      const target = variant === 'package-sessions' ? SESSIONS_TARGET_RATIO : TARGET_RATIO;
      const cpu = `; app CPU per entry ${cpuOf(variant)} against ${cpuOf(reference)} (${ms(ours.cpuUsPerEntry / theirs.cpuUsPerEntry)} ×)`;
      return {
        name: `entry (${client}): ${VARIANT_APPS[variant].label} req/s end to end ÷ the ${VARIANT_APPS[reference].label} (1 process each, ${CONCURRENCY} connections)`,
        measured: `${count(ours.rps)} req/s, p50 ${ms(ours.latency.p50)} / p99 ${ms(ours.latency.p99)} ms; ${ms(ours.rps / theirs.rps)} ×${cpu}${allRedirected ? '' : ' (**not every answer 303**)'}`,
        target: `≥ ${target} ×`,
        met: allRedirected && ours.rps / theirs.rps >= target,
      };
    };
    const figures: Figure[] = [
      ...REFERENCES.map((reference) => against(reference)),
      against('server-side', 'package-sessions'),
    ];
    const markdown = [
      `## entry (${client}): the callback end to end`,
      '',
      `1 app process per variant, started afresh every round; each request a new browser with its own code (issued in advance), ${CONCURRENCY} connections; ${plan.rounds} rounds of ${plan.roundMs / 1000} s per variant after a ${plan.warmUpMs / 1000} s warm-up, the order reversed every round. What each variant sends Redis, and app CPU per entry: bench/README.md.`,
      '',
      ...table(
        'variant | req/s per round | req/s | p50 ms | p99 ms | app CPU per entry | answers | code exchanges at the platform',
        VARIANTS.map((variant) => [
          VARIANT_APPS[variant].label,
          rounds[variant].map((r) => count((r.latencies.length / r.elapsedMs) * 1000)).join(' / '),
          count(result[variant].rps),
          ms(result[variant].latency.p50),
          ms(result[variant].latency.p99),
          cpuOf(variant),
          [...result[variant].statuses].map(([s, n]) => `${s || 'socket error'}: ${n}`).join(', '),
          count(result[variant].exchanges),
        ]),
      ),
    ];
    return { figures, markdown };
  } finally {
    agent.destroy();
  }
}
