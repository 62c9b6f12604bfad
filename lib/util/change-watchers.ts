// Watchers of keys, told when a key may have changed: what `changes.watch` hands out in both stores
// (the memory store calls them on its own writes, the record cache on Redis's messages).

/** Callbacks by key. */
export class ChangeWatchers {
  readonly #byKey = new Map<string, Set<() => void>>();

  /** Calls `onChange` whenever one of `keys` is woken (wake/wakeAll) until unsubscribed. */
  watch(keys: readonly string[], onChange: () => void): () => void {
    // Each watch its own entry, so the same callback watched twice is unsubscribed once each.
    const entry = (): void => {
      try {
        onChange();
      } catch {
        // A watcher's failure is its own; the others are still told.
      }
    };
    for (const key of keys) {
      let watchers = this.#byKey.get(key);
      if (watchers === undefined) this.#byKey.set(key, (watchers = new Set()));
      watchers.add(entry);
    }
    return () => {
      for (const key of keys) {
        const watchers = this.#byKey.get(key);
        watchers?.delete(entry);
        if (watchers?.size === 0) this.#byKey.delete(key);
      }
    };
  }

  /** Tells every watcher of `key`. */
  wake(key: string): void {
    const watchers = this.#byKey.get(key);
    if (watchers !== undefined) for (const onChange of [...watchers]) onChange();
  }

  /** Tells every watcher, once each. */
  wakeAll(): void {
    const all = new Set<() => void>();
    for (const watchers of this.#byKey.values()) for (const onChange of watchers) all.add(onChange);
    for (const onChange of all) onChange();
  }
}
