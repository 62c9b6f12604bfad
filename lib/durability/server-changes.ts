// The signs that the server behind the client may have changed (docs/durability.md): a command
// that failed on its connection (not a refusal), a server that answered as no master would, and the
// client's own reconnects and Sentinel or Cluster switches. A cache lease running out is none.
import { isRefusal, type RedisCommands } from '../redis/commands';

/**
 * The seam, telling `changed` of each failure that may be the server going away, and of the
 * client's reconnects and switches (until `close`).
 */
export function watchingServerChanges(
  redis: RedisCommands,
  changed: () => void,
): { redis: RedisCommands; close: () => void } {
  const noticed = (error: unknown): never => {
    if (!isRefusal(error)) changed();
    throw error;
  };
  const close = redis.onServerChange(changed);
  const watched: RedisCommands = {
    topology: redis.topology,
    keyPrefix: redis.keyPrefix,
    run: (command, key, args) => redis.run(command, key, args).catch(noticed),
    script: (script, keys, args) => redis.script(script, keys, args).catch(noticed),
    onEnd: (listener) => redis.onEnd(listener),
    onServerChange: (listener) => redis.onServerChange(listener),
    trackingLink: () => redis.trackingLink(),
    clusterLinks: () => redis.clusterLinks(),
    replicaLink: () => redis.replicaLink(),
  };
  return { redis: watched, close };
}
