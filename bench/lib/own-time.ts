// The package's own work per request, timed where it runs (BENCH_TIME_OWN=1 in a package app:
// login.middleware() from its call to its next(), and the handler's read of req.platformUser),
// beside the hand-written floor (floor.ts) timed the same way. Each round starts a fresh process of
// each, warms it, then loads it, the two in turn: one process can be faster or slower than another
// of the same code for the whole of its life, and a whole run can sit a microsecond or two above
// another on this VM, so the figure is the median of the rounds and every round is shown.
import type { Agent } from 'node:http';
import { send, type LoadResult } from './load';
import { stopBenchApps, type BenchApp } from './processes';
import { median } from './stats';

/** One round of one process: mean ns per request, each less one clock read. */
export interface OwnTimeRound {
  requests: number;
  middlewareNs: number;
  userNs: number;
}

export interface OwnTimes {
  package: OwnTimeRound[];
  floor: OwnTimeRound[];
}

/** µs per request of a round: the middleware and the read of req.platformUser together. */
export const roundUs = (round: OwnTimeRound): number => (round.middlewareNs + round.userNs) / 1000;

/** The median of the rounds' µs per request. */
export const medianUs = (rounds: readonly OwnTimeRound[]): number => median(rounds.map(roundUs));

export async function timeOwnWork(options: {
  agent: Agent;
  rounds: number;
  warmUpMs: number;
  roundMs: number;
  /** Starts a timed package process; `floor`: the hand-written floor instead of the package. */
  start: (floor: boolean) => Promise<BenchApp>;
  /** Saturates `app` with the package's sessions for `durationMs`. */
  load: (app: BenchApp, durationMs: number) => Promise<LoadResult>;
}): Promise<OwnTimes> {
  const { agent } = options;
  const ownTimeOf = async (app: BenchApp): Promise<OwnTimeRound> =>
    JSON.parse(
      (await send(agent, { port: app.port, path: '/bench/own-time' }, true)).body,
    ) as OwnTimeRound;
  const times: OwnTimes = { package: [], floor: [] };
  for (let round = 0; round < options.rounds; round += 1) {
    const apps = { package: await options.start(false), floor: await options.start(true) };
    try {
      for (const app of Object.values(apps)) {
        await options.load(app, options.warmUpMs);
        await ownTimeOf(app); // starts the count again after the warm-up
      }
      for (const name of ['package', 'floor'] as const) {
        await options.load(apps[name], options.roundMs);
        times[name].push(await ownTimeOf(apps[name]));
      }
    } finally {
      await stopBenchApps(Object.values(apps));
    }
  }
  return times;
}
