// Section "sockets" (issue 26): WebSockets held open on 2 game backend processes, each watched for
// its login's end: sockets held, memory per socket, Redis commands at rest, and the time from
// ending a login on one process to the 4401 close frame of its sockets on both.
// The aliases first: the socket helpers load the test app, which imports the package by name.
import '../../scripts/source-aliases';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_PLAYERS } from '../../lib/simulator';
import { enterAs, openSocket, startSocketProcess } from '../../test/helpers/spawn-socket-backends';
import { stopSocketProcesses } from '../../test/helpers/spawn-socket-backends';
import type { Browser, SocketProcess, TestSocket } from '../../test/helpers/spawn-socket-backends';
import { inFlight } from '../lib/load';
import { commandsDuring, memoryOf, PROBE_ENV, type ProcessMemory } from '../lib/socket-load';
import { recordKeyOf } from '../lib/records';
import { playerOf } from '../lib/sessions';
import { table, type BenchContext, type Figure, type SectionResult } from '../lib/report';
import { bytes, count, ms, summarize, type LatencySummary } from '../lib/stats';

const PROCESSES = 2;
const PREFIX = 'bench-ws:';
/** The figures: 10,000 sockets at rest over the processes, p99 to the close frame. */
const GOAL_SOCKETS = 10_000;
const GOAL_P99_MS = 100;
/** Commands/s beyond the 0-socket run still "none": a window catches a heartbeat more or less. */
const REST_NOISE_PER_S = 1;
const REST_SECONDS = 5;
/** A close that has not come by then is a failed trial (the package's own bound is 1 s). */
const CLOSE_GIVE_UP_MS = 2000;
/** The trials log out a demo player; the held sessions, of other players, stay open. */
const TRIAL_PLAYER = DEMO_PLAYERS[DEMO_PLAYERS.length - 1]!.openId;

/** Sockets per process at the memory step and at the most, sessions, trials, time budgets. */
const planFor = (quick: boolean) => {
  const [memoryStep, mostPerProcess, sessions, trials] = quick
    ? [100, 200, 20, 40]
    : [2000, GOAL_SOCKETS / PROCESSES, 200, 200];
  const [openBudgetMs, trialBudgetMs] = quick ? [60_000, 60_000] : [300_000, 180_000];
  return { memoryStep, mostPerProcess, sessions, trials, openBudgetMs, trialBudgetMs };
};

const kib = (value: number): string => `${(value / 1024).toFixed(1)} KiB`;

/** Commands per second over REST_SECONDS (in all, and by command), with nothing happening but what the processes do. */
async function restRate(ctx: BenchContext) {
  const { counts } = await commandsDuring([ctx.redis], () => sleep(REST_SECONDS * 1000));
  const byCommand = Object.entries(counts)
    .map(([name, calls]): [string, number] => [name, calls / REST_SECONDS])
    .sort((x, y) => y[1] - x[1]);
  return { perSecond: byCommand.reduce((sum, [, rate]) => sum + rate, 0), byCommand };
}

type CloseTrials = { run: number; times: LatencySummary; failures: string[] };

/** Up to `trials` times: the trial player's sockets on both processes, `end` through the other one. */
async function closeTrials(
  ctx: BenchContext,
  backends: readonly SocketProcess[],
  trials: number,
  deadline: number,
  end: (other: SocketProcess, browser: Browser) => Promise<string | undefined>,
): Promise<CloseTrials> {
  const latencies: number[] = [];
  const failures: string[] = [];
  let trial = 0;
  for (; trial < trials && Date.now() < deadline; trial += 1) {
    const browser = await enterAs(backends[trial % PROCESSES]!.url, ctx.sim, TRIAL_PLAYER);
    const sockets = await Promise.all(backends.map((b) => openSocket(b.url, browser.cookie)));
    // A close's code and time ('close' comes after an 'error' too).
    const closes = sockets.map(
      ({ ws }) =>
        new Promise<{ code: number; at: number }>((resolve) =>
          ws.once('close', (code) => resolve({ code, at: performance.now() })),
        ),
    );
    const startedAt = performance.now();
    const refused = await end(backends[(trial + 1) % PROCESSES]!, browser);
    if (refused !== undefined) failures.push(refused);
    for (const [index, close] of closes.entries()) {
      const closed = await Promise.race([close, sleep(CLOSE_GIVE_UP_MS).then(() => undefined)]);
      if (closed === undefined) {
        failures.push(`no close within ${CLOSE_GIVE_UP_MS} ms`);
        sockets[index]!.ws.terminate();
      } else if (closed.code !== 4401) {
        failures.push(`closed with ${closed.code}`);
      } else {
        latencies.push(closed.at - startedAt);
      }
    }
  }
  return { run: trial, times: summarize(latencies), failures };
}

export async function runSockets(ctx: BenchContext): Promise<SectionResult> {
  const plan = planFor(ctx.quick);
  const env = { REDIS_URL: ctx.redisUrl, SIM_URL: ctx.sim.url, KEY_PREFIX: PREFIX, ...PROBE_ENV };
  const backends: SocketProcess[] = await Promise.all(
    Array.from({ length: PROCESSES }, () => startSocketProcess(env)),
  );
  /** The sockets held open on each backend. */
  const held: TestSocket[][] = backends.map(() => []);
  try {
    // Warm-up: each process's upgrade, watch and close path compiled once before anything counts.
    for (let round = 0; round < 20; round += 1) {
      const browser = await enterAs(backends[round % PROCESSES]!.url, ctx.sim, playerOf(round));
      const sockets = await Promise.all(backends.map((b) => openSocket(b.url, browser.cookie)));
      for (const socket of sockets) socket.ws.close();
      await Promise.all(sockets.map((socket) => socket.closed));
    }
    await sleep(500);
    // Read twice: the first GC after start-up gives pages back, and the baseline would be high.
    await Promise.all(backends.map(memoryOf));
    const empty = await Promise.all(backends.map(memoryOf));
    const idle = await restRate(ctx);
    const cookies: string[] = [];
    for (let i = 0; i < plan.sessions; i += 1)
      cookies.push((await enterAs(backends[i % PROCESSES]!.url, ctx.sim, playerOf(i))).cookie);
    const openDeadline = Date.now() + plan.openBudgetMs;
    let stoppedBy: string | undefined;
    /** Up to `perProcess` sockets on each backend, 16 opening at a time, until a failure or the budget. */
    const openTo = (perProcess: number) =>
      Promise.all(
        held.map((sockets, i) => {
          const [url, first] = [backends[i]!.url, sockets.length];
          return inFlight(16, async (index) => {
            if (first + index >= perProcess || stoppedBy !== undefined) return false;
            if (Date.now() > openDeadline) stoppedBy = `time limit after ${sockets.length} sockets`;
            else
              try {
                return void sockets.push(await openSocket(url, cookies[index % cookies.length]!));
              } catch (error) {
                stoppedBy = `${(error as Error).message} after ${sockets.length} sockets`;
              }
            return false;
          });
        }),
      );
    // Memory read at the step and at the most, each process's sockets beside it.
    const readings: { counts: number[]; memory: ProcessMemory[] }[] = [];
    for (const perProcess of new Set([plan.memoryStep, plan.mostPerProcess])) {
      if (stoppedBy !== undefined) break;
      ctx.log(`sockets: opening up to ${perProcess} per process`);
      await openTo(perProcess);
      await sleep(500);
      const memory = await Promise.all(backends.map(memoryOf));
      readings.push({ counts: held.map((sockets) => sockets.length), memory });
    }
    if (stoppedBy !== undefined) ctx.log(`sockets: opening stopped: ${stoppedBy}`);
    const most = readings.at(-1)!;
    const heldTotal = most.counts.reduce((sum, n) => sum + n, 0);
    ctx.log(`sockets: at rest with ${heldTotal} sockets`);
    await sleep(1000);
    const loaded = await restRate(ctx);
    const beyondIdle = loaded.perSecond - idle.perSecond;
    const idleNames = new Set(idle.byCommand.map(([name]) => name));
    const newCommands = loaded.byCommand.filter(([name]) => !idleNames.has(name));
    const trialDeadline = Date.now() + plan.trialBudgetMs;
    ctx.log(`sockets: ${plan.trials} logoutPlayer trials with every socket still open`);
    const byLogout = await closeTrials(ctx, backends, plan.trials, trialDeadline, async (other) => {
      const answer = await fetch(
        `${other.url}/admin/logout-player?openId=${encodeURIComponent(TRIAL_PLAYER)}`,
        { method: 'POST' },
      );
      return answer.ok ? undefined : `logoutPlayer answered ${answer.status}`;
    });
    ctx.log(`sockets: ${plan.trials / 2} trials of DEL of the record by hand`);
    const byDel = await closeTrials(ctx, backends, plan.trials / 2, trialDeadline, async (_, b) => {
      const deleted = await ctx.redis.del(recordKeyOf(`${PREFIX}t:`, b.sessionId));
      return deleted === 1 ? undefined : 'no record to delete';
    });
    const closeTimes = byLogout.times;
    await sleep(200);
    const heldClosed = held
      .flat()
      .filter((socket) => socket.ws.readyState !== socket.ws.OPEN).length;
    const perSocket = (i: number, { counts, memory }: (typeof readings)[number]) => ({
      rss: (memory[i]!.rss - empty[i]!.rss) / counts[i]!,
      heap: (memory[i]!.heap - empty[i]!.heap) / counts[i]!,
    });
    const mostPerProcess = Math.min(...most.counts);
    const mean = (of: (each: ProcessMemory) => number) =>
      backends.reduce((sum, _, i) => sum + of(perSocket(i, most)), 0) / PROCESSES;
    const [rssPerSocket, heapPerSocket] = [mean((m) => m.rss), mean((m) => m.heap)];
    const goalSockets = ctx.quick ? plan.mostPerProcess * PROCESSES : GOAL_SOCKETS;
    const figures: Figure[] = [
      {
        name: 'Sockets held per process, login-end watch on',
        measured: `${count(mostPerProcess)} (${count(heldTotal)} over ${PROCESSES})`,
        target: `${count(goalSockets / PROCESSES)} (${count(goalSockets)} over ${PROCESSES})`,
        met: heldTotal >= goalSockets,
      },
      {
        name: 'Memory per open socket (RSS / V8 heap)',
        measured: `${kib(rssPerSocket)} / ${kib(heapPerSocket)}`,
        target: 'reported',
      },
      {
        name: `Redis commands/s at rest with ${count(heldTotal)} sockets, beyond 0 sockets`,
        measured: `${beyondIdle.toFixed(1)}/s (heartbeat alone: ${idle.perSecond.toFixed(1)}/s)`,
        target: `0 (±${REST_NOISE_PER_S}/s)`,
        met: Math.abs(beyondIdle) <= REST_NOISE_PER_S && newCommands.length === 0,
      },
      {
        name: `p99 logoutPlayer → 4401 close, ${PROCESSES} processes`,
        measured: `${ms(closeTimes.p99)} ms`,
        target: `≤ ${GOAL_P99_MS} ms`,
        met: closeTimes.p99 <= GOAL_P99_MS && byLogout.failures.length === 0,
      },
    ];
    const rates = (rate: typeof idle) =>
      rate.byCommand.map(([name, perS]) => `${name} ${perS.toFixed(1)}`).join(', ') || '—';
    const memoryRow = (name: string, n: number, at: ProcessMemory, each?: ProcessMemory) => [
      ...[name, count(n), bytes(at.rss), bytes(at.heap)],
      ...(each ? [kib(each.rss), kib(each.heap)] : ['', '']),
    ];
    const markdown = [
      '## Sockets: held, memory, Redis at rest, time to close',
      '',
      `${PROCESSES} socket backends (test/helpers/socket-backend-program.ts), ${plan.sessions} sessions each holding sockets on both; memory read in each process after a full GC, beside the same process with no socket (RSS per socket means something only over thousands of sockets).`,
      '',
      ...table(
        'process | sockets | RSS | heap | RSS / socket | heap / socket',
        backends.flatMap((_, i) => [
          memoryRow(`${i + 1} (none)`, 0, empty[i]!),
          ...readings.map((r) =>
            memoryRow(`${i + 1}`, r.counts[i]!, r.memory[i]!, perSocket(i, r)),
          ),
        ]),
      ),
      '',
      stoppedBy === undefined
        ? `Every socket asked for opened (${count(heldTotal)}).`
        : `Opening stopped early: ${stoppedBy}.`,
      '',
      `Redis at rest (INFO commandstats over ${REST_SECONDS} s, the readings' own INFO left out), all ${PROCESSES} processes together:`,
      '',
      ...table('open sockets | commands/s | by command (/s)', [
        ['0', idle.perSecond.toFixed(1), rates(idle)],
        [count(heldTotal), loaded.perSecond.toFixed(1), rates(loaded)],
      ]),
      '',
      `From ending the trial player's login (\`POST /admin/logout-player\` to the other process, or a \`DEL\` of its token record) to the 4401 close frame of its socket on each process, with the ${count(heldTotal)} sockets still open:`,
      '',
      ...table(
        'ended by | trials | closes | p50 | p90 | p99 | max | failed',
        [['logoutPlayer', byLogout] as const, ['DEL of the record', byDel] as const].map(
          ([name, { run, times, failures }]) => [
            ...[name, count(run), count(times.count)],
            ...[times.p50, times.p90, times.p99, times.max].map((value) => `${ms(value)} ms`),
            failures.length === 0 ? '0' : `${failures.length} (${failures[0]})`,
          ],
        ),
      ),
      '',
      `Held sockets of other players closed meanwhile: ${count(heldClosed)} (should be 0).`,
      '',
    ];
    return { figures, markdown };
  } finally {
    for (const socket of held.flat()) socket.ws.terminate();
    await stopSocketProcesses(backends);
  }
}
