// One clear line for a Redis client's connection errors instead of one per reconnect attempt: a
// client retrying every 200 ms against a Redis that is not there would otherwise print the same
// ECONNREFUSED five times a second, and never say what to check.
import { createLogThrottle } from '../observability/log-throttle';
import { defaultLogger, type PlatformLogger } from '../observability/logger';

/** A Redis client as far as this needs it: node-redis and ioredis both emit `error` and `ready`. */
interface ErrorEmitter {
  on(event: 'error', listener: (error: unknown) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
}

export interface RedisErrorReportOptions {
  /** Where the line goes. Defaults to defaultLogger() (the console for warnings and errors). */
  logger?: PlatformLogger;
  /**
   * The URL the client was given (`REDIS_URL`), named in the line without its password. Defaults
   * to the host and port of the failed connection, or of the client's options.
   */
  url?: string;
  /** The same error is said at most once per this many ms (the rest at debug). Defaults to 30 000. */
  intervalMs?: number;
}

/** `url` with any password (and user name) left out, or `undefined` when it is not a URL. */
function withoutCredentials(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return undefined;
  }
}

/** Where the client tried to connect: the error's address, else the client's own options. */
function targetOf(error: unknown, client: unknown): string | undefined {
  const { address, port } = (error ?? {}) as { address?: unknown; port?: unknown };
  if (typeof address === 'string') {
    return `redis://${address.includes(':') ? `[${address}]` : address}${typeof port === 'number' ? `:${port}` : ''}`;
  }
  // ioredis: `options.host` / `options.port`; node-redis: `options.url` or `options.socket`.
  const options = (client as { options?: Record<string, unknown> }).options;
  if (typeof options?.url === 'string') return withoutCredentials(options.url);
  const socket = (options?.socket ?? options) as { host?: unknown; port?: unknown } | undefined;
  if (typeof socket?.host === 'string') {
    return `redis://${socket.host}${typeof socket.port === 'number' ? `:${socket.port}` : ''}`;
  }
  return undefined;
}

/**
 * The errno code of a connection error (ECONNREFUSED, ENOTFOUND, …), else the error's name or its
 * class's (node-redis names a dropped connection only by its class, SocketClosedUnexpectedlyError).
 */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code)) return code;
  if (!(error instanceof Error)) return typeof error;
  return error.name === 'Error' ? error.constructor.name : error.name;
}

/**
 * A dropped connection, however the client names it: a restart closes the socket cleanly
 * (node-redis: SocketClosedUnexpectedlyError) or resets it when a command of ours was still unread
 * (ECONNRESET, or EPIPE for a write after the close), and a server that wants TLS resets it at once.
 */
const DROPPED = (url: string): string =>
  `the connection was dropped: did Redis at REDIS_URL=${url} restart or fail over, close idle clients (its timeout), or does it want TLS (rediss://)?`;

/** What to check, per error code; `url` is where the client connects. */
const HINTS: Record<string, (url: string) => string> = {
  ECONNREFUSED: (url) => `nothing listens there: is redis-server running? REDIS_URL=${url}`,
  ENOTFOUND: (url) => `its host name does not resolve: is REDIS_URL=${url} right?`,
  EAI_AGAIN: (url) => `its host name does not resolve: is REDIS_URL=${url} right?`,
  ETIMEDOUT: () => 'the connection timed out: is the host reachable (firewall, security group)?',
  ECONNRESET: DROPPED,
  EPIPE: DROPPED,
  SocketClosedUnexpectedlyError: DROPPED,
};
const OTHER_HINT = (url: string): string => `check that Redis runs and REDIS_URL=${url} is right`;

/**
 * Listens to `redis`'s `error` events (which also keeps node-redis from throwing, and ioredis from
 * printing "Unhandled error event", on each one) and says the first error of an outage once per
 * `intervalMs`, with where the client connects (no password) and what to check (a restart or a
 * failover is one line: the dropped connection, not each refused reconnect after it); then once
 * that Redis answers again. Meanwhile the package answers requests that need Redis with 503
 * `store_unavailable`. `redis.on('error', …)` of your own is then not needed.
 */
export function reportRedisErrors(
  redis: ErrorEmitter,
  options: RedisErrorReportOptions = {},
): void {
  const logger = options.logger ?? defaultLogger();
  const intervalMs = options.intervalMs ?? 30_000;
  const seconds = Math.max(1, Math.round(intervalMs / 1000));
  const throttle = createLogThrottle(intervalMs);
  const given = options.url === undefined ? undefined : withoutCredentials(options.url);
  let failing = 0;
  redis.on('error', (error) => {
    failing += 1;
    const code = codeOf(error);
    const target = given ?? targetOf(error, redis) ?? 'Redis';
    const hint = (HINTS[code] ?? OTHER_HINT)(target);
    const fields = { event: 'redisError', code, redis: target };
    const message =
      `Redis at ${target} is unreachable (${code}): ${hint}${hint.endsWith('?') ? '' : '.'} ` +
      `The client keeps reconnecting; until it answers, requests that need it get 503 ` +
      `store_unavailable, and an app that awaits \`connect()\` before it listens waits (this is ` +
      `said once per ${seconds} s).`;
    // One key, not one per code: the refused reconnects after a dropped connection are the same outage.
    const heldBack = throttle('unreachable');
    if (heldBack === undefined) logger.debug(fields, message);
    else logger.error(heldBack > 0 ? { ...fields, heldBack } : fields, message);
  });
  redis.on('ready', () => {
    if (failing === 0) return;
    const target = given ?? targetOf(undefined, redis) ?? 'Redis';
    logger.info(
      { event: 'redisReady', redis: target, errors: failing },
      `Redis at ${target} answers again (after ${failing} connection errors).`,
    );
    failing = 0;
  });
}
