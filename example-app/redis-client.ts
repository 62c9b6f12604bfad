// The ioredis client of the example, set up so that a stalled or absent Redis fails a request
// within about 2 s (503 store_unavailable) instead of hanging it, and reconnects by itself.
import { Redis } from 'ioredis';

/** An ioredis client for both the session store and the token store. */
export function createRedisClient(url: string): Redis {
  return new Redis(url, {
    // A command not answered in 1 s fails (ioredis waits forever by default): with the session read
    // and a token store read in one request, a stalled Redis is a 503 within about 2 s.
    commandTimeout: 1000,
    // While disconnected, a queued command fails after one reconnect attempt instead of twenty.
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    // Reconnect forever, at most a second apart, so the app recovers when Redis returns.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  });
}
