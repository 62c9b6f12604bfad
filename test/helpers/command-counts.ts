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
