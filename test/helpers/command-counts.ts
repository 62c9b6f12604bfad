// What a redis-server has run, from its own bookkeeping (INFO commandstats): how tests see which
// commands a request sent, without a mock or a proxy in between.

/** A connection that can ask Redis for INFO (ioredis and node-redis both can). */
export interface InfoClient {
  info(section: string): Promise<string>;
}

/** Calls of each command the server has run so far, by lower-case name (`get`, `evalsha`, …). */
export async function commandCounts(raw: InfoClient): Promise<Record<string, number>> {
  const info = await raw.info('commandstats');
  return Object.fromEntries(
    [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]),
  );
}

/** Calls of one command the server has run so far (0 before its first). */
export async function commandCount(raw: InfoClient, command: string): Promise<number> {
  return (await commandCounts(raw))[command] ?? 0;
}

/**
 * Commands that run whatever the traffic: the key tracking's heartbeat (PING and a read of its mark,
 * MGET, every 100 ms per store) and the tests' own INFO.
 */
export const BACKGROUND_COMMANDS: ReadonlySet<string> = new Set(['ping', 'mget', 'info']);

/**
 * Runs `window` until the server ran no command during one (but BACKGROUND_COMMANDS), `tries` times
 * at most; resolves the commands of the last run with their calls: [] when one was quiet. Memory
 * that serves rightly reads Redis in a window a stall outlasted its lease in (docs/caching.md);
 * code that always reads it sends something in every window.
 */
export async function quietWindow(
  raw: InfoClient,
  tries: number,
  window: () => Promise<void>,
): Promise<Array<readonly [string, number]>> {
  let sent: Array<readonly [string, number]> = [];
  for (let run = 0; run < tries; run += 1) {
    const before = await commandCounts(raw);
    await window();
    const after = await commandCounts(raw);
    sent = Object.entries(after)
      .map(([name, calls]) => [name, calls - (before[name] ?? 0)] as const)
      .filter(([name, calls]) => calls > 0 && !BACKGROUND_COMMANDS.has(name));
    if (sent.length === 0) break;
  }
  return sent;
}
