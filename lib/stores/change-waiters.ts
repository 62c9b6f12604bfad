// Promises that resolve when a key changes, or after a timeout: what `waitForChange` hands out in
// both stores (the memory store wakes them on its own writes, the record cache on Redis's messages).

/** Wake-ups by key; each removes itself from every key it waits on when called. */
export class ChangeWaiters {
  readonly #byKey = new Map<string, Set<() => void>>();

  /** Resolves when one of `keys` is woken (wake/wakeAll), or after `timeoutMs`. */
  waitFor(keys: readonly string[], timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        for (const key of keys) {
          const waiters = this.#byKey.get(key);
          waiters?.delete(wake);
          if (waiters?.size === 0) this.#byKey.delete(key);
        }
        resolve();
      };
      // Unreferenced: a wait nobody awaits any more (its lock was taken) must not hold the process.
      const timer = setTimeout(wake, timeoutMs);
      timer.unref();
      for (const key of keys) {
        let waiters = this.#byKey.get(key);
        if (waiters === undefined) this.#byKey.set(key, (waiters = new Set()));
        waiters.add(wake);
      }
    });
  }

  /** Wakes every wait on `key`. */
  wake(key: string): void {
    const waiters = this.#byKey.get(key);
    if (waiters !== undefined) for (const wake of [...waiters]) wake();
  }

  /** Wakes every wait. */
  wakeAll(): void {
    for (const waiters of [...this.#byKey.values()]) for (const wake of [...waiters]) wake();
  }
}
