// Rounds of one window per variant, each round on processes started afresh (two processes started
// alike keep their speeds apart for life), each warmed up first, the order reversed every other round.

export interface RoundsPlan<V, P, W> {
  variants: readonly V[];
  rounds: number;
  /** Starts one process per variant (in the round's order) and readies it. */
  start: (order: readonly V[]) => Promise<Map<V, P>>;
  stop: (running: Map<V, P>) => Promise<unknown>;
  warmUp: (variant: V, process: P) => Promise<unknown>;
  window: (variant: V, process: P) => Promise<W>;
  log: (line: string) => void;
}

/** Each variant's windows, in round order. */
export async function alternatingRounds<V, P, W>(plan: RoundsPlan<V, P, W>): Promise<Map<V, W[]>> {
  const windows = new Map<V, W[]>(plan.variants.map((v) => [v, []]));
  for (let round = 0; round < plan.rounds; round += 1) {
    const order = round % 2 === 0 ? plan.variants : [...plan.variants].reverse();
    const running = await plan.start(order);
    try {
      for (const variant of order) await plan.warmUp(variant, running.get(variant)!);
      for (const variant of order) {
        plan.log(`round ${round + 1}/${plan.rounds}, ${String(variant)}`);
        windows.get(variant)!.push(await plan.window(variant, running.get(variant)!));
      }
    } finally {
      await plan.stop(running);
    }
  }
  return windows;
}

/** The micro files' rounds: each run `rounds` times in alternating order, after a warm-up run. */
export async function alternatingRuns<N extends string>(
  runs: Record<N, () => Promise<number>>,
  rounds: number,
): Promise<Map<N, number[]>> {
  const variants = Object.keys(runs) as N[];
  for (const name of variants) await runs[name]();
  const none = async (): Promise<undefined> => undefined;
  return alternatingRounds<N, undefined, number>({
    ...{ variants, rounds, start: async () => new Map(), stop: none, warmUp: none },
    window: (name) => runs[name](),
    log: () => undefined,
  });
}
