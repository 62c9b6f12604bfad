// The signs that the server behind the client may have changed (docs/durability.md): a command
// that failed on its connection (not a refusal), a server that answered as no master would, and the
// client's own reconnects and Sentinel or Cluster switches. A cache lease running out is none.
import type { RedisCommands } from '../redis/commands';
import { isRefusal } from '../redis/redis-errors';

/**
 * Tells `changed` of the client's reconnects and switches (until `close`), and, through `noticed`
 * (which rethrows), of each failed command that may be the server going away.
 */
export function watchingServerChanges(
  redis: RedisCommands,
  changed: () => void,
): { noticed: (error: unknown) => never; close: () => void } {
  const noticed = (error: unknown): never => {
    if (!isRefusal(error)) changed();
    throw error;
  };
  return { noticed, close: redis.onServerChange(changed) };
}
