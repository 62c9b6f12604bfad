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
