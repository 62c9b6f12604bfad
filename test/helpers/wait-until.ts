// Polls a condition that another process or server makes true, with a bound so a test fails
// instead of hanging when it never does.

/** Resolves once `condition()` is true; rejects naming `what` after `timeoutMs`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * The value `read()` gives once `done(value)` holds (polled every 10 ms), or its last value after
 * `timeoutMs`: for a test to assert on (`expect(await valueOnce(…)).toBe(…)`), so a wait for
 * something the test promises ends in an assertion that says what came instead, not in a helper's
 * timeout.
 */
export async function valueOnce<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > giveUpAt) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Whether `condition()` holds within `timeoutMs`: `expect(await eventually(…)).toBe(true)`. */
export const eventually = (
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<boolean> => valueOnce(condition, (value) => value, timeoutMs);
