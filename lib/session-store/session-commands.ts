// The four commands the session store sends, on either Redis client: a session's JSON with its
// PTTL (one round trip), a write with a TTL, a renewal, a delete.
import type { Redis } from 'ioredis';
import type { NodeRedisClient } from './session-store-options';

export interface SessionCommands {
  /** The stored JSON (null: no key) and the key's PTTL in ms (-1: none, -2: no key). */
  read(key: string): Promise<{ json: string | null; pttlMs: number }>;
  write(key: string, json: string, ttlSeconds: number): Promise<void>;
  renew(key: string, ttlSeconds: number): Promise<void>;
  remove(key: string): Promise<void>;
}

export const isIoredis = (client: unknown): client is Redis =>
  typeof client === 'object' &&
  client !== null &&
  typeof (client as Redis).getBuffer === 'function' &&
  typeof (client as Redis).pipeline === 'function';

export const isNodeRedis = (client: unknown): client is NodeRedisClient =>
  typeof client === 'object' &&
  client !== null &&
  typeof (client as NodeRedisClient).pTTL === 'function' &&
  typeof (client as NodeRedisClient).sendCommand === 'function';

function ioredisCommands(client: Redis): SessionCommands {
  return {
    async read(key) {
      // GET and PTTL written together: one round trip, run back to back by the server.
      const replies = await client.pipeline().get(key).pttl(key).exec();
      const [[getError, json], [pttlError, pttl]] = replies as [
        [Error | null, string | null],
        [Error | null, number],
      ];
      if (getError ?? pttlError) throw getError ?? pttlError;
      return { json, pttlMs: pttl };
    },
    async write(key, json, ttlSeconds) {
      await client.set(key, json, 'EX', ttlSeconds);
    },
    async renew(key, ttlSeconds) {
      await client.expire(key, ttlSeconds);
    },
    async remove(key) {
      await client.del(key);
    },
  };
}

function nodeRedisCommands(client: NodeRedisClient): SessionCommands {
  return {
    async read(key) {
      const [json, pttl] = (await client
        .multi()
        .get(key)
        .pTTL(key)
        .execAsPipeline()) as unknown as [string | null, number];
      return { json, pttlMs: pttl };
    },
    async write(key, json, ttlSeconds) {
      await client.set(key, json, { expiration: { type: 'EX', value: ttlSeconds } });
    },
    async renew(key, ttlSeconds) {
      await client.expire(key, ttlSeconds);
    },
    async remove(key) {
      await client.del(key);
    },
  };
}

export function sessionCommandsOf(client: Redis | NodeRedisClient): SessionCommands {
  return isIoredis(client) ? ioredisCommands(client) : nodeRedisCommands(client);
}
