// What the errors ioredis and node-redis raise mean: a server's reply or refusal, or an outage.
// express-session (connect-redis) passes an outage to `next(err)` before any of the package's code
// runs; the package's error handler answers it as the documented 503 `store_unavailable`.
import { storeUnavailable } from '../errors';

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

/**
 * True when `error` is of a class named one of `names` (the clients' own error classes: neither
 * client is a dependency to import them from, and node-redis's set no `name`).
 */
export function isOfClass(error: unknown, names: readonly string[]): error is Error {
  if (!(error instanceof Error)) return false;
  for (let proto: unknown = error; proto !== null; proto = Object.getPrototypeOf(proto)) {
    if (names.includes((proto as { constructor?: { name?: string } }).constructor?.name ?? ''))
      return true;
  }
  return false;
}

/**
 * A store call that failed with `cause`, as StoreUnavailableError: said as a closed client when it is
 * node-redis's error for a command on a client never connected (or closed), no outage to wait out.
 */
export const storeFailed = (where: { store: string; what: string }, cause: unknown) =>
  storeUnavailable({ ...where, clientClosed: isOfClass(cause, ['ClientClosedError']) }, cause);

/** A reply of the server (ioredis's ReplyError, node-redis's ErrorReply), not a client failure. */
export const isServerReply = (error: unknown): error is Error =>
  isOfClass(error, ['ReplyError', 'ErrorReply']);

/**
 * The server refused the command for good (renamed or forbidden, or a Redis before 6), as opposed
 * to a connection that went away or a server that is briefly busy.
 */
export const isRefusal = (error: unknown): boolean =>
  isServerReply(error) &&
  // MOVED and ASK: a Cluster's slot moved under a command sent straight to a node (key tracking).
  !/^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY|NOSCRIPT|MOVED|ASK)/.test(
    error.message,
  );
