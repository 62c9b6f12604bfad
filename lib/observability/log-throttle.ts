// Keeps a repeated problem to one log line per key per interval: a refused entry an attacker can
// repeat, or a 5xx on every request while Redis or the platform is down, must not flood the app's
// log. The line that opens the next interval says how many were held back meanwhile.

/** Keys remembered at most: a key per error code or per setup problem, so a handful in practice. */
const MAX_KEYS = 256;

/** Decides, per key, whether a line is written now; returns how many were held back since, or `undefined`. */
export function createLogThrottle(intervalMs: number): (key: string) => number | undefined {
  const keys = new Map<string, { writtenAt: number; heldBack: number }>();
  return (key) => {
    const at = Date.now();
    const seen = keys.get(key);
    if (seen !== undefined && at - seen.writtenAt < intervalMs) {
      seen.heldBack += 1;
      return undefined;
    }
    if (seen === undefined && keys.size >= MAX_KEYS) keys.clear();
    keys.set(key, { writtenAt: at, heldBack: 0 });
    return seen?.heldBack ?? 0;
  };
}
