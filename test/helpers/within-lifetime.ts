// Steps that must come within a short lifetime they start, on a machine that may stall them.

/**
 * Runs `steps` (which make new keys each time) until they took less than `lifetimeMs`, 3 times at
 * most, and resolves what the last run found. Steps that must come within a lifetime started in
 * them may find it over when a busy machine stalls them: that says nothing of the store. A run
 * within the lifetime, or the third, is asserted on.
 */
export async function withinLifetime<T>(lifetimeMs: number, steps: () => Promise<T>): Promise<T> {
  for (let run = 1; ; run += 1) {
    const startedAt = Date.now();
    const found = await steps();
    if (Date.now() - startedAt < lifetimeMs || run === 3) return found;
  }
}
