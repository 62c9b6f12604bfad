// Recognises the errors ioredis and node-redis raise while Redis is unreachable or stalled. express-session
// (connect-redis) passes them to `next(err)` before any of the package's code runs; the package's
// error handler answers them as the documented 503 `store_unavailable` rather than a bare 500.
import { isOfClass } from './commands';

/**
 * Messages ioredis, node-redis (ClientClosedError, ClientOfflineError, ConnectionTimeoutError,
 * SocketTimeoutError, SocketClosedUnexpectedlyError) and Node's sockets under them use for a Redis
 * that cannot answer.
 */
const OUTAGE_MESSAGE =
  /Command timed out|Connection is closed|Stream isn't writeable|The client is (closed|offline)|Connection timeout|Socket timeout|Socket closed unexpectedly|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE/;

/** True for an error that means "Redis is unreachable or stalled" (not a bug, not a bad request). */
export function isRedisOutage(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    error.name === 'MaxRetriesPerRequestError' ||
    error.name === 'ClusterAllFailedError' ||
    OUTAGE_MESSAGE.test(error.message) ||
    // node-redis's command timeout: a `TimeoutError` with no message and the name `Error`.
    isOfClass(error, ['TimeoutError'])
  );
}
