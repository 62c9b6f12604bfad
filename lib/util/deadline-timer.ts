// A deadline that an answer already received is never judged late by.

/**
 * Calls `late` once `ms` have passed and the event loop has also read what arrived meanwhile
 * (setImmediate runs after the poll phase): after a stall (a GC pause, a loaded machine) the timer
 * and the answer are both due, and the timer's phase comes first. Returns what cancels it, also
 * between the timer and that deferred call.
 */
export function deadlineTimer(late: () => void, ms: number): () => void {
  let deferred: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => (deferred = setImmediate(late)), ms);
  return () => {
    clearTimeout(timer);
    clearImmediate(deferred);
  };
}
