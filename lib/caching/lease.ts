// When memory may serve: the two states of a tracking's lease (off, on) and the transitions between
// them, the one place where a cache is switched on or off (docs/caching.md, "States"). Every
// renewal says until when (`renewed`), so a hit after that moment is refused even if this
// process's timers run late.

/** What a lease tells. No method may throw. */
export interface LeaseListener {
  /** Any key may have changed: drop every copy. */
  allChanged(): void;
  /** Memory may serve (`true`) or may not (`false`, always after `allChanged()`). */
  liveChanged(live: boolean): void;
  /** Memory may serve until `until` (epoch ms) and not after, unless renewed again. */
  renewed?(until: number): void;
}

export class Lease {
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly listener: LeaseListener) {}

  /** True while on. */
  get live(): boolean {
    return this.#timer !== undefined;
  }

  /** On (or still on) until `until`; a moment already past renews nothing. */
  renew(until: number): void {
    const left = until - Date.now();
    if (left <= 0) return;
    const wasLive = this.live;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#runOut(), left);
    this.#timer.unref();
    this.listener.renewed?.(until);
    if (!wasLive) this.listener.liveChanged(true);
  }

  /** Off now: what proved the reports' channel no longer holds. */
  end(): void {
    if (!this.live) return;
    clearTimeout(this.#timer);
    this.#runOut();
  }

  /** Off: the lease's end passed with no renewal (or was ended). */
  #runOut(): void {
    this.#timer = undefined;
    this.listener.allChanged();
    this.listener.liveChanged(false);
  }
}
