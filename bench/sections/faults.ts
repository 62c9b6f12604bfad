// Section "faults": two package processes on one Redis, refresh-token rotation and 30 s access
// tokens, a few dozen players for a minute while one process is killed and restarted, Redis stalls
// and the platform fails. BENCH_FAULTS_SECONDS sets the duration (default 60).
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { startHarnessApp, startHarnessApps, stopApps, type AppProcess } from '../lib/app-process';
import { asPlayer, errorOf, keepAliveAgent, send } from '../lib/load';
import { driverStore, readRecord } from '../lib/records';
import { table, tally, tallyList, type BenchContext, type SectionResult } from '../lib/report';
import { enter, playerOf, type BenchSession } from '../lib/sessions';
import { count, ms, summarize } from '../lib/stats';

const PLAYERS = 36;
const ACCESS_TOKEN_SECONDS = 30;
/** Refresh 10 s before expiry (refresh-ahead from 15 s): every player refreshes about twice a minute. */
const BENCH_LOGIN_OPTIONS = JSON.stringify({ refresh: { skewSeconds: 10 } });
/** Errors are allowed this long after a fault ends: Redis reconnects, cooldowns after a failure run out. */
const GRACE_MS = 8000;
const THINK_MS = 150;

type Window = { name: string; startMs: number; endMs: number };
type Outcome = { atMs: number; status: number; error: string; latencyMs: number };

export async function runLoadWithFaults(ctx: BenchContext): Promise<SectionResult> {
  const seconds = Number(process.env.BENCH_FAULTS_SECONDS ?? (ctx.quick ? 25 : 60));
  const durationMs = seconds * 1000;
  const { sim } = ctx;
  const env = {
    REDIS_URL: ctx.redisUrl,
    SIM_URL: sim.url,
    KEY_PREFIX: 'faults:',
    BENCH_LOGIN_OPTIONS,
  };
  sim.clearFaults();
  sim.setRotation(true);
  sim.setAccessTokenLifetime(ACCESS_TOKEN_SECONDS);
  const apps: (AppProcess | undefined)[] = await startHarnessApps('package', 2, env);
  const agent = keepAliveAgent(64);
  const store = driverStore(ctx.redis, 'faults:t:');
  try {
    const sessions: BenchSession[] = [];
    for (let i = 0; i < PLAYERS; i += 1)
      sessions.push(await enter(agent, sim, apps[i % 2]!.port, playerOf(i)));
    sim.resetCalls();
    ctx.log(`load-with-faults: ${PLAYERS} players for ${seconds} s on 2 processes`);
    const windows: Window[] = [];
    const outcomes: Outcome[] = [];
    const startedAt = performance.now();
    const now = (): number => performance.now() - startedAt;
    let running = true;
    /** A load balancer's choice: the player's usual process, or the other one while it is down. */
    const pick = (index: number, turn: number): AppProcess | undefined =>
      apps[(index + turn) % 2] ?? apps[(index + turn + 1) % 2];
    const player = async (index: number): Promise<void> => {
      const session = sessions[index]!;
      for (let turn = 0; running; turn += 1) {
        const app = pick(index, turn);
        if (app === undefined) {
          await sleep(THINK_MS);
          continue;
        }
        const atMs = now();
        const answer = await send(agent, asPlayer(app.port, session.cookie, '/api/token'), true);
        // A socket error on a process that was just killed is the load balancer's to absorb.
        if (answer.status === 0 && apps.indexOf(app) === -1) continue;
        const error = answer.status === 200 ? '' : errorOf(answer);
        outcomes.push({ atMs, status: answer.status, error, latencyMs: answer.ms });
        await sleep(THINK_MS * (0.5 + Math.random()));
      }
    };
    /** A fault from `share` of the run on: its window lasts while `run` does. */
    const fault = async (name: string, share: number, run: () => Promise<unknown>) => {
      await sleep(Math.max(0, durationMs * share - now()));
      const startMs = now();
      await run();
      windows.push({ name, startMs, endMs: now() });
      ctx.log(`load-with-faults: ${name}`);
    };
    const faults = async (): Promise<void> => {
      await fault('process killed and restarted', 0.15, async () => {
        const victim = apps[1]!;
        apps[1] = undefined;
        victim.child.kill('SIGKILL');
        await sleep(2000);
        apps[1] = await startHarnessApp('package', env);
      });
      // Connections stay open, nothing answers.
      await fault('Redis stalled 3 s (SIGSTOP)', 0.4, async () => {
        ctx.redisServer.pause();
        await sleep(3000);
        ctx.redisServer.resume();
      });
      await fault('platform failing (503)', 0.65, async () => {
        sim.injectFault({ kind: 'status', status: 503 }, { grant: 'refresh_token' });
        await sleep(5000);
        sim.clearFaults();
      });
    };
    const faulting = faults();
    const players = Array.from({ length: PLAYERS }, (_, index) => player(index));
    await sleep(durationMs);
    await faulting;
    running = false;
    await Promise.all(players);
    // After the run: every player still logged in, on both processes.
    let lost = 0;
    for (const [index, session] of sessions.entries()) {
      const record = await readRecord(store, session.sessionId);
      const target = asPlayer(apps[index % 2]!.port, session.cookie, '/api/token');
      const answer = await send(agent, target);
      if (record === undefined || answer.status !== 200) lost += 1;
    }
    const inWindow = (atMs: number): Window | undefined =>
      windows.find((w) => atMs >= w.startMs - 100 && atMs <= w.endMs + GRACE_MS);
    const failures = outcomes.filter((o) => o.status !== 200);
    const unauthorized = outcomes.filter((o) => o.status === 401).length;
    const outside = failures.filter((o) => inWindow(o.atMs) === undefined);
    const latency = (of: Outcome[]) => {
      const { p50, p99, max } = summarize(of.map((o) => o.latencyMs));
      return `${ms(p50)} / ${ms(p99)} / ${ms(max)}`;
    };
    const byWindow = windows.map((w) => {
      const inside = outcomes.filter((o) => inWindow(o.atMs) === w);
      const errs = inside.filter((o) => o.status !== 200);
      const kinds = tallyList(tally(errs, (o) => `${o.status} ${o.error}`.trim()));
      const when = `${((w.endMs - w.startMs) / 1000).toFixed(1)} s from ${(w.startMs / 1000).toFixed(1)} s`;
      const errors = errs.length === 0 ? '0' : `${count(errs.length)} (${kinds})`;
      return [w.name, when, count(inside.length), errors, latency(inside)];
    });
    const refreshCalls = sim.calls.refresh_token;
    const met = lost === 0 && unauthorized === 0 && outside.length === 0;
    const summary =
      `${count(outcomes.length)} requests, ${count(refreshCalls)} refresh calls; ` +
      `logins lost ${lost} of ${PLAYERS}; 401: ${unauthorized}; errors ${count(failures.length)}, outside fault windows ${outside.length}`;
    return {
      figures: [
        {
          name: `faults (2 processes, rotation, ${PLAYERS} players, ${seconds} s; kill + restart, Redis stall, platform 503)`,
          measured: summary,
          target: 'no login lost, no 401, errors only inside fault windows',
          met,
        },
      ],
      markdown: [
        '## faults: load with faults',
        '',
        `2 package processes (\`refresh: { skewSeconds: 10 }\`), rotation, ${ACCESS_TOKEN_SECONDS} s access tokens; ${PLAYERS} players send \`GET /api/token\` ${THINK_MS / 2}–${(THINK_MS * 3) / 2} ms apart for ${seconds} s. Faults: at 15 % a process SIGKILLed and started again 2 s later, at 40 % redis-server stopped for 3 s, at 65 % the token endpoint answers 503 to refreshes for 5 s; an error counts as inside a window up to ${GRACE_MS / 1000} s after it ends.`,
        '',
        ...table(
          ['window', 'when', 'requests', 'errors', 'latency p50 / p99 / max ms'],
          [
            ...byWindow,
            ['whole run', `${seconds} s`, count(outcomes.length)].concat(
              `${count(failures.length)} (outside windows: ${outside.length})`,
              latency(outcomes),
            ),
          ],
        ),
        '',
        `Token-endpoint refresh calls: ${count(refreshCalls)}. After the run, ${PLAYERS - lost} of ${PLAYERS} players still had their record and were answered 200; 401 answers during the run: ${unauthorized}.`,
      ],
    };
  } finally {
    sim.clearFaults();
    sim.setRotation(false);
    sim.setAccessTokenLifetime(7200);
    ctx.redisServer.resume();
    agent.destroy();
    await stopApps(apps);
  }
}
