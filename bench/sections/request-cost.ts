// Section "request-cost": what a logged-in `GET /api/me` costs behind the package and behind the
// example app, against the floor (express + express-session + connect-redis alone) on the same
// Redis client, each app a process of its own, measured as an outside check would (bench/README.md).
import { execFile } from 'node:child_process';
import { globalAgent } from 'node:http';
import { join } from 'node:path';
import { exampleClient, type ClientChoice } from '../apps/session-stack';
import { startApp, startExample, startInTurn, stopApps, type AppProcess } from '../lib/app-process';
import { cannon, type CannonResult } from '../lib/autocannon';
import { asPlayer, fixedRate, keepAliveAgent, send, type Target } from '../lib/load';
import { table, type BenchContext, type Figure, type SectionResult } from '../lib/report';
import { alternatingRounds } from '../lib/rounds';
import { enter, entryHeaders, loginBaseline, sessionOf } from '../lib/sessions';
import { count, fine, median, ms } from '../lib/stats';

const ROOT = join(__dirname, '..', '..');
const CONNECTIONS = 32;
/** How close the bench's example ÷ floor must be to the outside check's (a ratio of ratios). */
const AGREEMENT = 0.05;
/** The share of the floor's capacity offered at the fixed rate (busy, not saturated). */
const FIXED_RATE_SHARE = 0.25;
/** Issue 44: the middleware's own cost, at most this share of the floor's CPU per request. */
const MIDDLEWARE_SHARE_TARGET = 0.05;
const TARGETS = { rps: 1.1, cpu: 0.9 };
/** On a Cluster (issue 44): the example's req/s ÷ the bound's (floor-in-memory, no Redis at all). */
const CLUSTER_BOUND_TARGET = 0.9;
/** Issue 44: on one Redis, the example ≥ 0.95 × the bound, in the bench and in the outside check alike. */
const BOUND_TARGET = 0.95;

/** The driver's redis-server, or a Redis Cluster from its seed `nodes` (`host:port,…`). */
export type RequestCostLayout = { name: 'standalone' } | { name: 'cluster'; nodes: string };
const STANDALONE: RequestCostLayout = { name: 'standalone' };

/** What each variant is: bench/README.md (apps/floor.js, apps/serve.ts and the example). */
const VARIANTS = [
  'floor',
  'floor-in-memory',
  'package-without-middleware',
  'package',
  'package-sessions',
  'example',
] as const;
type Variant = (typeof VARIANTS)[number];
const CLUSTER_VARIANTS: readonly Variant[] = ['floor', 'floor-in-memory', 'example'];
const onPackage = (variant: Variant): boolean => variant.startsWith('package');

type Window = { result: CannonResult; cpuUsPerRequest: number };

/** Logs in through the example's embedded simulator, as a player would: lobby, /enter, callback. */
export async function enterExample(app: AppProcess): Promise<string> {
  const lobby = /Platform simulator \(lobby\): (\S+?)\/?\s/.exec(app.output)?.[1];
  if (lobby === undefined) throw new Error('the example printed no simulator URL');
  const entered = await fetch(`${lobby}/enter`, { redirect: 'manual' });
  const { port, pathname, search } = new URL(entered.headers.get('location')!);
  const headers = entryHeaders({ url: lobby });
  const answer = await send(globalAgent, { port: +port, path: pathname + search, headers }, true);
  return sessionOf(answer, 303, 'example entry').cookie;
}

/** Logs in to the floor, or to a package app with a code from the driver's simulator. */
const enterBenchApp = async (ctx: BenchContext, variant: Variant, { port }: AppProcess) =>
  (onPackage(variant)
    ? await enter(globalAgent, ctx.sim, port, 'player-ada')
    : await loginBaseline(globalAgent, port, 'player-ada')
  ).cookie;

export function startVariant(
  ctx: BenchContext,
  variant: Variant,
  client: ClientChoice,
  layout: RequestCostLayout = STANDALONE,
): Promise<AppProcess> {
  const redisEnv: Record<string, string> =
    layout.name === 'standalone'
      ? { REDIS_URL: ctx.redisUrl }
      : { REDIS_URL: '', REDIS_CLUSTER_NODES: layout.nodes };
  const clientName = exampleClient(client);
  // As `npm run example` starts it (on Redis; its embedded simulator; its own defaults).
  if (variant === 'example')
    return startExample('example', { ...redisEnv, REDIS_CLIENT: clientName });
  const memory = variant === 'floor' ? '0' : '1';
  if (!onPackage(variant))
    return startApp({
      name: variant,
      script: 'bench/apps/floor.js',
      env: { CLIENT: clientName, ...redisEnv, PORT: '0', F_MEMORY: memory },
      listening: /floor listening (\d+)/,
    });
  return startApp({
    name: variant,
    script: 'bench/apps/serve.ts',
    env: {
      BENCH_APP: variant,
      BENCH_CLIENT: client,
      ...{ REDIS_URL: ctx.redisUrl, SIM_URL: ctx.sim.url },
    },
    listening: /listening (\d+)/,
    builtPackage: true,
  });
}

/** What a script printed, or why it failed. */
const outputOf = (command: string, args: string[], env: Record<string, string>) =>
  new Promise<{ error: Error | null; stdout: string }>((resolve) => {
    const options = { cwd: ROOT, env: { ...process.env, ...env }, timeout: 600_000 };
    execFile(command, args, options, (error, stdout) => resolve({ error, stdout }));
  });

/** bench/micro/middleware-call.ts's figure: the median difference and its rounds' range, in µs. */
type MiddlewareCost = { costUs: number; rounds: number; low: number; high: number };

/** Runs bench/micro/middleware-call.ts in a process of its own, on the package's build. */
const MIDDLEWARE_CALL = 'bench/micro/middleware-call.ts';
async function middlewareCostInOneProcess(client: ClientChoice, quick: boolean) {
  const args = ['-r', 'esbuild-register', '-r', './bench/lib/built-package.ts', MIDDLEWARE_CALL];
  const env = { CLIENT: client, ...(quick ? { ROUNDS: '3' } : {}) };
  const { error, stdout } = await outputOf(process.execPath, args, env);
  if (error) throw error;
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as MiddlewareCost;
}

/** The outside check's example ÷ floor: the ratios of its totals, and the range of its pairs'. */
type OutsideCheck = Record<'rps' | 'cpu', number> & Record<'rpsPairs' | 'cpuPairs', number[]>;

/** The last line of bench/outside-check/run.sh: example ÷ floor, and its pairs' ranges. */
const OUTSIDE_CHECK_LINE =
  /req\/s ([\d.]+), CPU per request ([\d.]+) \(pairs: req\/s ([\d.]+)–([\d.]+), CPU ([\d.]+)–([\d.]+)\)/;

/** bench/outside-check/run.sh (Linux: /proc) against the floor or the bound, from the same run. */
async function outsideCheck(
  plan: { pairs: number; windowS: number; warmUpS: number },
  client: ClientChoice,
  against: 'floor' | 'bound',
): Promise<OutsideCheck | string> {
  if (process.platform !== 'linux') return 'not run (it reads /proc)';
  const { error, stdout } = await outputOf('bash', ['bench/outside-check/run.sh'], {
    ...{ PAIRS: String(plan.pairs), DUR: String(plan.windowS), WARM: String(plan.warmUpS) },
    CLIENT: exampleClient(client),
    FLOOR_FLAGS: against === 'bound' ? 'F_MEMORY=1' : '',
  });
  const match = OUTSIDE_CHECK_LINE.exec(stdout);
  if (error || !match) return `failed: ${error?.message ?? stdout.slice(-200)}`;
  const [rps, cpu, ...pairs] = match.slice(1).map(Number) as number[];
  return { rps: rps!, cpu: cpu!, rpsPairs: pairs.slice(0, 2), cpuPairs: pairs.slice(2) };
}

/** `rate` requests a second, evenly spaced (bench/README.md, "The fixed rate": not autocannon's -R). */
async function evenlySpaced(target: Target, rate: number, seconds: number): Promise<CannonResult> {
  const agent = keepAliveAgent(CONNECTIONS);
  try {
    const run = await fixedRate({ agent, rate, durationMs: seconds * 1000, target });
    const ok = [...run.statuses].reduce((sum, [status, n]) => sum + (status < 300 ? n : 0), 0);
    const [p50Ms, p99Ms] = [median(run.latencies), median(run.latencies, 99)];
    const rps = (ok / run.elapsedMs) * 1000;
    return { ok, failed: run.latencies.length - ok, rps, p50Ms, p99Ms };
  } finally {
    agent.destroy();
  }
}

/** A variant's process of one round, logged in. */
type Running = AppProcess & { cookie: string };

export async function runRequestCost(
  ctx: BenchContext,
  client: ClientChoice,
  layout: RequestCostLayout = STANDALONE,
): Promise<SectionResult> {
  const plan = ctx.quick
    ? { warmUpS: 1, windowS: 2, pairs: 2, fixedS: 2, fixedPairs: 1 }
    : { warmUpS: 2, windowS: 4, pairs: 10, fixedS: 4, fixedPairs: 3 };
  const onCluster = layout.name === 'cluster';
  const variants = onCluster ? CLUSTER_VARIANTS : VARIANTS;
  const label = onCluster ? `${client}, ${layout.name}` : client;
  const load = async (variant: Variant, app: Running, seconds: number, rate?: number) => {
    const before = await app.cpuUs();
    const target = asPlayer(app.port, app.cookie);
    const result =
      rate === undefined
        ? await cannon(target, CONNECTIONS, seconds)
        : await evenlySpaced(target, rate, seconds);
    const cpuUs = (await app.cpuUs()) - before;
    if (result.failed > 0) throw new Error(`${variant}: ${result.failed} answers were not 2xx`);
    return { result, cpuUsPerRequest: cpuUs / Math.max(1, result.ok) } satisfies Window;
  };
  const started = async (variant: Variant): Promise<Running> => {
    const app = await startVariant(ctx, variant, client, layout);
    try {
      const login = variant === 'example' ? enterExample(app) : enterBenchApp(ctx, variant, app);
      return Object.assign(app, { cookie: await login });
    } catch (error) {
      await app.stop();
      throw error;
    }
  };
  // Every pair on fresh processes of every variant, each logged in and warmed up.
  const pairs = (pairs: number, seconds: number, rate?: number) =>
    alternatingRounds<Variant, Running, Window>({
      variants,
      rounds: pairs,
      start: (order) => startInTurn(order, started),
      stop: (running) => stopApps(running.values()),
      warmUp: (variant, running) => load(variant, running, plan.warmUpS),
      window: (variant, running) => load(variant, running, seconds, rate),
      log: (line) =>
        ctx.log(
          `request-cost (${label}): ${line}, ${rate === undefined ? `${CONNECTIONS} connections` : `fixed ${rate} req/s`}`,
        ),
    });
  const saturated = await pairs(plan.pairs, plan.windowS);
  let outside: OutsideCheck | string | undefined;
  let outsideBound: OutsideCheck | string | undefined;
  let middlewareCost: MiddlewareCost | undefined;
  if (!onCluster) {
    // Right after the bench's windows, in processes of its own.
    ctx.log(`request-cost (${label}): the outside check (bench/outside-check/run.sh), twice`);
    outside = await outsideCheck(plan, client, 'floor');
    outsideBound = await outsideCheck(plan, client, 'bound');
    ctx.log(`request-cost (${label}): the middleware alone (bench/micro/middleware-call.ts)`);
    middlewareCost = await middlewareCostInOneProcess(client, ctx.quick);
  }
  const floorRps = median(saturated.get('floor')!.map((w) => w.result.rps));
  const rate = Math.max(50, Math.floor((floorRps * FIXED_RATE_SHARE) / 10) * 10);
  const fixed = await pairs(plan.fixedPairs, plan.fixedS, rate);
  const total = (windows: readonly Window[]): number =>
    windows.reduce((sum, w) => sum + w.result.ok, 0);
  const cpuOf = (windows: readonly Window[]): number =>
    windows.reduce((sum, w) => sum + w.cpuUsPerRequest * w.result.ok, 0) /
    Math.max(1, total(windows));
  const floor = saturated.get('floor')!;
  const floorCpu = cpuOf(floor);
  /** Each pair's ratio to the floor, of req/s or (`of`) another figure of a window. */
  const pairRatios = (variant: Variant, of = (w: Window) => w.result.rps): number[] =>
    saturated.get(variant)!.map((w, i) => of(w) / of(floor[i]!));
  const range = (values: readonly number[]): string =>
    `${fine(Math.min(...values))}–${fine(Math.max(...values))}`;
  const checked = (check: OutsideCheck): string =>
    `${fine(check.rps)} req/s, ${fine(check.cpu)} CPU (pairs ${range(check.rpsPairs)}, ${range(check.cpuPairs)})`;
  const figures: Figure[] = [];
  const rows: string[][] = [];
  const name = (what: string): string => `request-cost (${label}): ${what}`;
  for (const variant of variants) {
    const windows = saturated.get(variant)!;
    const rpsRatio = total(windows) / total(floor);
    const cpuRatio = cpuOf(windows) / floorCpu;
    const ratios = `${fine(rpsRatio)} req/s, ${fine(cpuRatio)} CPU`;
    const p99Added = median(
      fixed.get(variant)!.map((w, i) => w.result.p99Ms - fixed.get('floor')![i]!.result.p99Ms),
    );
    const isFloor = variant === 'floor';
    rows.push([
      variant,
      windows.map((w) => count(w.result.rps)).join(' / '),
      isFloor ? '1' : `${fine(rpsRatio)} (pairs ${range(pairRatios(variant))})`,
      `${cpuOf(windows).toFixed(0)} µs`,
      isFloor ? '1' : fine(cpuRatio),
      ms(median(windows.map((w) => w.result.p99Ms))),
      ms(median(fixed.get(variant)!.map((w) => w.result.p99Ms))),
      isFloor ? '' : `${p99Added >= 0 ? '+' : ''}${ms(p99Added)}`,
    ]);
    if (variant === 'floor-in-memory')
      figures.push({
        name: name('the bound — the session stack with no Redis at all (MemoryStore) ÷ floor'),
        measured: ratios,
        target: 'reported: what a store sending no command can at best reach',
      });
    if (variant === 'package-without-middleware') {
      const own = cpuOf(saturated.get('package')!) - cpuOf(windows);
      figures.push({
        name: name(
          'what the middleware itself costs, across two processes — package − the same app without login.middleware()',
        ),
        measured: `${own.toFixed(1)} µs per request (${((own / floorCpu) * 100).toFixed(1)} % of the floor's ${floorCpu.toFixed(0)} µs); without it ÷ floor: ${ratios}`,
        target:
          'reported: two processes started alike differ by about as much; the next row is the figure',
      });
      if (middlewareCost !== undefined) {
        const share = middlewareCost.costUs / floorCpu;
        figures.push({
          name: name(
            `what the middleware itself costs, in one process (bench/micro/middleware-call.ts: login.middleware() called in a loop on a logged-in request, beside a marker read, ${middlewareCost.rounds} alternating rounds, median of the differences) ÷ the floor's CPU per request`,
          ),
          measured: `${middlewareCost.costUs.toFixed(2)} µs per request (rounds ${middlewareCost.low.toFixed(1)} to ${middlewareCost.high.toFixed(1)}): ${(share * 100).toFixed(1)} % of the floor's ${floorCpu.toFixed(0)} µs`,
          target: `≤ ${MIDDLEWARE_SHARE_TARGET * 100} %`,
          met: share <= MIDDLEWARE_SHARE_TARGET,
        });
      }
    }
    if (variant === 'package')
      figures.push({
        name: name(`package ÷ floor, req/s and CPU per request (${CONNECTIONS} connections)`),
        measured: ratios,
        target:
          "reported (issue 44: the middleware's own cost, above, is the package-alone target)",
      });
    if (variant !== 'package-sessions' && variant !== 'example') continue;
    // Against the bound, what the package itself costs: the whole-stack targets leave it the
    // room between the bound and ≤ 0.90 of the floor, which differs between the clients.
    const bound = saturated.get('floor-in-memory')!;
    figures.push({
      name: name(`${variant} ÷ floor, req/s and CPU per request (${CONNECTIONS} connections)`),
      measured: `${ratios}; ${(cpuOf(windows) - cpuOf(bound)).toFixed(0)} µs per request above the bound`,
      target: `≥ ${TARGETS.rps} req/s, ≤ ${TARGETS.cpu} CPU`,
      met: rpsRatio >= TARGETS.rps && cpuRatio <= TARGETS.cpu,
    });
    if (variant !== 'example') continue;
    const boundRatio = total(windows) / total(bound);
    const boundTarget = onCluster ? CLUSTER_BOUND_TARGET : BOUND_TARGET;
    figures.push({
      name: name(
        `example ÷ the bound (floor-in-memory, no Redis at all), req/s (${CONNECTIONS} connections)`,
      ),
      measured: `${fine(boundRatio)} req/s, ${fine(cpuOf(windows) / cpuOf(bound))} CPU`,
      target: `≥ ${boundTarget} req/s`,
      met: boundRatio >= boundTarget,
    });
    if (outsideBound !== undefined)
      figures.push({
        name: name(
          'example ÷ the bound, the outside check (FLOOR_FLAGS=F_MEMORY=1 bench/outside-check/run.sh: apps/floor.js on MemoryStore, same run)',
        ),
        measured: typeof outsideBound === 'string' ? outsideBound : checked(outsideBound),
        target: `≥ ${BOUND_TARGET} req/s`,
        ...(typeof outsideBound === 'string' ? {} : { met: outsideBound.rps >= BOUND_TARGET }),
      });
    figures.push({
      name: name(`example p99 added at a fixed ${count(rate)} req/s (median of pairs)`),
      measured: `${p99Added >= 0 ? '+' : ''}${ms(p99Added)} ms`,
      target: '≤ 0 ms',
      met: p99Added <= 0,
    });
  }
  const markdown = [
    `## request-cost (${label}): a logged-in GET /api/me`,
    '',
    `${onCluster ? "On the `cluster` section's 3 masters (the floor on a Cluster client of the same library, the example with REDIS_CLUSTER_NODES). " : ''}Each app a process of its own, started afresh for every pair and warmed up for ${plan.warmUpS} s; autocannon, ${CONNECTIONS} connections, ${plan.pairs} alternating pairs of ${plan.windowS} s windows, ratios of all windows' totals (the pairs' range beside them); ` +
      `fixed rate: ${count(rate)} req/s (${FIXED_RATE_SHARE * 100} % of the floor's capacity), evenly spaced, ${plan.fixedPairs} pairs of ${plan.fixedS} s, p99 added = the median of the pairs' differences (bench/README.md).`,
    '',
    ...table(
      `app | req/s per window | req/s ÷ floor | CPU per request | CPU ÷ floor | p99 ms (saturated) | p99 ms at ${count(rate)} req/s | p99 added ms`,
      rows,
    ),
  ];
  if (outside !== undefined) {
    const example = saturated.get('example')!;
    const [rps, cpu] = [total(example) / total(floor), cpuOf(example) / floorCpu];
    const agree =
      typeof outside === 'string'
        ? undefined
        : Math.abs(rps / outside.rps - 1) <= AGREEMENT &&
          Math.abs(cpu / outside.cpu - 1) <= AGREEMENT;
    const theirs = typeof outside === 'string' ? outside : checked(outside);
    const ours = `${fine(rps)} req/s, ${fine(cpu)} CPU (pairs ${range(pairRatios('example'))}, ${range(pairRatios('example', (w) => w.cpuUsPerRequest))})`;
    figures.push({
      name: name(
        'example ÷ floor, this bench vs the outside check (bench/outside-check/run.sh, same run)',
      ),
      measured: `${ours} vs ${theirs}`,
      target: `within ${AGREEMENT * 100} %`,
      ...(agree === undefined ? {} : { met: agree }),
    });
    markdown.push(
      '',
      `The outside check, run right after these windows (its own redis-server, \`npm run example\` and apps/floor.js started afresh every pair, autocannon's command line, ${plan.pairs} pairs of ${plan.windowS} s): example ÷ floor ${theirs}; this bench: ${ours}. One pair's ratio can be off by the width of its range; the figure compares the ratios of all windows' totals.`,
    );
  }
  return { figures, markdown };
}
