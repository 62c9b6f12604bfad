// A deadline that an answer already received is never judged late by.

/**
 * Calls `late` once `ms` have passed and the event loop has also read what arrived meanwhile
 * (setImmediate runs after the poll phase): after a stall (a GC pause, a loaded machine) the timer
 * and the answer are both due, and the timer's phase comes first. Clear it with clearTimeout.
 */
export const deadlineTimer = (late: () => void, ms: number): NodeJS.Timeout =>
  setTimeout(() => setImmediate(late), ms);
