// Timers the simulator starts while answering (latency, slow bodies), tracked so close() can stop
// them all and leave nothing behind that keeps the process alive.

/** A set of timeouts and intervals that can be cleared at once. */
export class TimerSet {
  private readonly timers = new Set<NodeJS.Timeout>();

  /** Runs `callback` once after `ms`. */
  later(callback: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      callback();
    }, ms);
    this.timers.add(timer);
  }

  /** Runs `callback` every `ms` until the returned stop function or clearAll is called. */
  every(callback: () => void, ms: number): () => void {
    const timer = setInterval(callback, ms);
    this.timers.add(timer);
    return () => {
      clearInterval(timer);
      this.timers.delete(timer);
    };
  }

  clearAll(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
