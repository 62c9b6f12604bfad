// Section "refresh-storm": 1,000 concurrent requests over 100 sessions whose tokens all need a
// refresh, across 4 processes: the package, and the hand-written pattern with and without rotation.
import type { Agent } from 'node:http';
import { harnessReports, startHarnessApps, stopApps, type AppProcess } from '../lib/app-process';
import { asPlayer, burst, errorOf, keepAliveAgent, send, type Answer } from '../lib/load';
import type { Target } from '../lib/load';
import { driverStore, sessionKeyOf } from '../lib/records';
import { table, tally, tallyList, type BenchContext, type Figure } from '../lib/report';
import type { SectionResult } from '../lib/report';
import { enter, expireRecord, naiveSession, playerOf, type BenchSession } from '../lib/sessions';
import { count, ms, summarize, type LatencySummary } from '../lib/stats';

const PROCESSES = 4;
const SESSIONS = 100;
const REQUESTS_PER_SESSION = 10;
/** Past every access token the simulator issued, so each refresh gets a new token. */
const CLOCK_STEP_SECONDS = 3 * 3600;

/** What one storm produced, as the results show it. */
interface StormOutcome {
  answers: Answer[];
  tokenCalls: number;
  /** 200 answers whose access token the platform no longer accepts once the storm is over. */
  staleTokens: number;
  /** Answers carrying invalid_grant (naive) or reauth_required (package). */
  reauth: number;
  /** durationMs of the package's refresh events (platform call + write), as the apps saw them. */
  refreshMs: number[];
}

/** 1,000 requests: each session's 10 spread over the 4 processes, sessions interleaved. */
const stormTargets = (apps: readonly AppProcess[], sessions: readonly BenchSession[]): Target[] =>
  Array.from({ length: REQUESTS_PER_SESSION }, (_, round) =>
    sessions.map((session, i) =>
      asPlayer(apps[(i + round) % apps.length]!.port, session.cookie, '/api/token'),
    ),
  ).flat();

const tokenOf = (answer: Answer): string | undefined => {
  if (answer.status !== 200) return undefined;
  return (JSON.parse(answer.body) as { accessToken?: string }).accessToken;
};

/** Asks the platform's /userinfo about each distinct token served; counts answers with a dead one. */
async function countStale(ctx: BenchContext, answers: readonly Answer[], agent: Agent) {
  const tokens = answers.map(tokenOf).filter((token): token is string => token !== undefined);
  const port = Number(new URL(ctx.sim.url).port);
  const dead = new Set<string>();
  for (const token of new Set(tokens)) {
    const headers = { authorization: `Bearer ${token}` };
    if ((await send(agent, { port, path: '/userinfo', headers })).status !== 200) dead.add(token);
  }
  return tokens.filter((token) => dead.has(token)).length;
}

async function storm(
  ctx: BenchContext,
  targets: readonly Target[],
  agent: Agent,
): Promise<StormOutcome> {
  ctx.sim.resetCalls();
  const ports = [...new Set(targets.map((target) => target.port))].map((port) => ({ port }));
  const refreshDurations = () => harnessReports(ports, '/bench/refresh-durations');
  await refreshDurations(); // empties what an earlier storm left
  const answers = await burst(agent, targets);
  const refreshMs = await refreshDurations();
  const tokenCalls = ctx.sim.calls.refresh_token;
  const reauth = answers.filter((a) => /^(invalid_grant|reauth_required)$/.test(errorOf(a))).length;
  const staleTokens = await countStale(ctx, answers, agent);
  return { answers, tokenCalls, staleTokens, reauth, refreshMs };
}

const latencies = (outcomes: readonly StormOutcome[]): number[] =>
  outcomes.flatMap((outcome) => outcome.answers.map((answer) => answer.ms));

const statusesOf = (outcome: StormOutcome): string =>
  tallyList(tally(outcome.answers, (answer) => String(answer.status || 'socket error')));

/** `rounds` of a fresh storm then a refresh storm, then one refresh storm with rotation. */
async function storms(ctx: BenchContext, kind: 'package' | 'naive', rounds: number) {
  const prefix = kind === 'package' ? 'st:' : 'nv:';
  const who = kind === 'package' ? 'package' : 'hand-written pattern';
  const env = { REDIS_URL: ctx.redisUrl, SIM_URL: ctx.sim.url, KEY_PREFIX: prefix };
  const apps = await startHarnessApps(kind, PROCESSES, env);
  const agent = keepAliveAgent((SESSIONS * REQUESTS_PER_SESSION) / PROCESSES);
  const store = driverStore(ctx.redis, `${prefix}t:`);
  try {
    const sessions: BenchSession[] = [];
    for (let index = 0; index < SESSIONS; index += 1)
      sessions.push(await enter(agent, ctx.sim, apps[index % PROCESSES]!.port, playerOf(index)));
    const keys = sessions.map((session) => sessionKeyOf(prefix, session.sessionId));
    const targets = stormTargets(apps, sessions);
    const expired = (tokens: { expiresAt: number }) => (tokens.expiresAt = Date.now() - 1000);
    const expireAll = async (): Promise<void> => {
      await Promise.all(
        kind === 'package'
          ? sessions.map((session) => expireRecord(store, session.sessionId))
          : keys.map((key) => naiveSession(ctx.redis, key, expired)),
      );
      ctx.sim.advanceClock(CLOCK_STEP_SECONDS);
    };
    /** Sessions of the hand-written pattern left without tokens. */
    const loggedOut = async (): Promise<number> =>
      (await Promise.all(keys.map((key) => naiveSession(ctx.redis, key)))).filter(
        (data) => data?.tokens === undefined,
      ).length;
    await burst(agent, targets); // opens the connections and warms the processes up
    const fresh: StormOutcome[] = [];
    const refreshed: StormOutcome[] = [];
    for (let round = 0; round < rounds; round += 1) {
      ctx.log(`storm: ${who} round ${round + 1}/${rounds}, fresh tokens then every one due`);
      fresh.push(await storm(ctx, targets, agent));
      await expireAll();
      refreshed.push(await storm(ctx, targets, agent));
    }
    const loggedOutAfterRefresh = kind === 'naive' ? await loggedOut() : 0;
    ctx.sim.setRotation(true);
    try {
      await expireAll();
      ctx.log(`storm: ${who}, rotating refresh tokens`);
      const rotating = await storm(ctx, targets, agent);
      const loggedOutAfterRotation = kind === 'naive' ? await loggedOut() : 0;
      return { fresh, refreshed, rotating, loggedOutAfterRefresh, loggedOutAfterRotation };
    } finally {
      ctx.sim.setRotation(false);
    }
  } finally {
    agent.destroy();
    await stopApps(apps);
  }
}

export async function runRefreshStorm(ctx: BenchContext): Promise<SectionResult> {
  const rounds = ctx.quick ? 1 : 3;
  const pkg = await storms(ctx, 'package', rounds);
  const { rotating } = pkg;
  const naive = await storms(ctx, 'naive', 1);
  const freshLatency = summarize(latencies(pkg.fresh));
  const refreshLatency = summarize(latencies(pkg.refreshed));
  const latencyRow = (name: string, fresh: LatencySummary, refresh: LatencySummary) => [
    ...[name, ms(fresh.p50), ms(fresh.p99), ms(refresh.p50), ms(refresh.p99)],
    ...[`+${ms(refresh.p50 - fresh.p50)}`, `+${ms(refresh.p99 - fresh.p99)}`],
  ];
  const platformLatency = summarize(pkg.refreshed.flatMap((outcome) => outcome.refreshMs));
  const calls = pkg.refreshed.map((outcome) => outcome.tokenCalls);
  const callsMet = calls.every((n) => n === SESSIONS);
  const allOk = (outcome: StormOutcome): boolean =>
    outcome.answers.every((answer) => answer.status === 200);
  const figures: Figure[] = [
    {
      name: 'refresh-storm: token-endpoint calls (1,000 requests, 100 sessions, 4 processes)',
      measured: `${calls.join(', ')} in ${rounds} storm${rounds > 1 ? 's' : ''}${pkg.refreshed.every(allOk) ? '; every answer 200' : '; **not every answer 200**'}`,
      target: `exactly ${SESSIONS} per storm`,
      met: callsMet,
    },
    {
      name: 'refresh-storm: latency added vs the same storm with fresh tokens, p50 / p99; beside it the platform call itself in those storms',
      measured:
        `+${ms(refreshLatency.p50 - freshLatency.p50)} / +${ms(refreshLatency.p99 - freshLatency.p99)} ms; ` +
        `the refresh's platform call and write (its \`refresh\` event's durationMs, ${count(platformLatency.count)} events) ${ms(platformLatency.p50)} / ${ms(platformLatency.p99)} ms`,
      target: "about the platform's own latency",
      met: refreshLatency.p50 - freshLatency.p50 <= platformLatency.p50 * 1.25,
    },
    {
      name: 'refresh-storm with rotation, package: token calls; invalid_grant / stale answers',
      measured: `${rotating.tokenCalls}; ${rotating.reauth} / ${rotating.staleTokens}`,
      target: `${SESSIONS}; 0 / 0`,
      met: [rotating.tokenCalls - SESSIONS, rotating.reauth, rotating.staleTokens].every((n) => !n),
    },
    {
      name: 'refresh-storm: same storms, hand-written pattern: token calls without / with rotation',
      measured: `${count(naive.refreshed[0]!.tokenCalls)} / ${count(naive.rotating.tokenCalls)} (package: ${SESSIONS})`,
      target: 'reported',
    },
    {
      name: 'refresh-storm: hand-written pattern with rotation: invalid_grant answers; stale tokens served; players logged out',
      measured: `${count(naive.rotating.reauth)} of 1,000; ${naive.rotating.staleTokens}; ${naive.loggedOutAfterRotation} of ${SESSIONS}`,
      target: 'reported',
    },
  ];
  const outcomeRow = (name: string, outcome: StormOutcome, loggedOut?: number): string[] => {
    const { p50, p99 } = summarize(outcome.answers.map((answer) => answer.ms));
    const out = loggedOut === undefined ? '—' : `${loggedOut} of ${SESSIONS}`;
    const { tokenCalls, reauth, staleTokens } = outcome;
    const counts = [count(tokenCalls), statusesOf(outcome), String(reauth), String(staleTokens)];
    return [name, ...counts, out, ms(p50), ms(p99)];
  };
  const markdown = [
    '## refresh-storm',
    '',
    `${PROCESSES} app processes, ${SESSIONS} sessions, ${SESSIONS * REQUESTS_PER_SESSION} \`GET /api/token\` sent at once (bench/README.md). Package: ${rounds} rounds of a fresh storm then a refresh storm, then one refresh storm with rotation; the hand-written pattern under the same storms. "Stale": 200 answers whose access token the platform's /userinfo rejects after the storm; "logged out": sessions left without tokens.`,
    '',
    ...table(
      'storm | token calls | answers | invalid_grant / reauth | stale | logged out | p50 ms | p99 ms',
      [
        ...pkg.fresh.map((outcome, index) =>
          outcomeRow(`package, fresh tokens #${index + 1}`, outcome),
        ),
        ...pkg.refreshed.map((outcome, index) =>
          outcomeRow(`package, refresh #${index + 1}`, outcome),
        ),
        outcomeRow('package, refresh, rotation on', pkg.rotating),
        outcomeRow('hand-written, fresh tokens', naive.fresh[0]!),
        outcomeRow('hand-written, refresh', naive.refreshed[0]!, naive.loggedOutAfterRefresh),
        outcomeRow(
          'hand-written, refresh, rotation on',
          naive.rotating,
          naive.loggedOutAfterRotation,
        ),
      ],
    ),
    '',
    ...table(
      'latency (all rounds) | fresh p50 | fresh p99 | refresh p50 | refresh p99 | added p50 | added p99',
      [
        latencyRow('package', freshLatency, refreshLatency),
        latencyRow(
          'hand-written',
          summarize(latencies(naive.fresh)),
          summarize(latencies(naive.refreshed)),
        ),
      ],
    ),
    '',
    `The refreshes' own \`durationMs\` (their \`refresh\` events: the token request to the new record written): p50 ${ms(platformLatency.p50)}, p90 ${ms(platformLatency.p90)}, p99 ${ms(platformLatency.p99)} ms over ${count(platformLatency.count)} refreshes.`,
  ];
  return { figures, markdown };
}
