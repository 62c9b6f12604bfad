// The package's logging: one `logger` option taking a pino-compatible logger; by default debug and
// info lines go to the `debug` package under `express-platform-login:*` and warnings and errors to
// the console, so a setup mistake is seen without `DEBUG` set. Fields are structured; the session id
// appears only as a hash, and codes and tokens are redacted from any URL before it is logged.
import createDebug from 'debug';

/** Fields of a log line. Never a token, a code, a secret or a raw session id. */
export type LogFields = Record<string, unknown>;

/** A pino-compatible logger: `logger.info({ openId }, 'player entered')`. */
export interface PlatformLogger {
  debug(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** The default logger: `DEBUG=express-platform-login:*` shows everything, `…:warn,…:error` the problems. */
export const debugLogger = (namespace?: string): PlatformLogger => levelLogger(namespace, false);

/** Writes each level to `debug`; with `loud`, warnings and errors to the console when it is off. */
function levelLogger(namespace = 'express-platform-login', loud: boolean): PlatformLogger {
  const logger = {} as PlatformLogger;
  for (const level of LEVELS) {
    const write = createDebug(`${namespace}:${level}`);
    const toConsole = loud && (level === 'warn' || level === 'error');
    logger[level] = (fields, message) => {
      if (write.enabled) write('%s %o', message, fields);
      else if (!toConsole) return;
      else if (Object.keys(fields).length === 0) console[level](`[${namespace}] ${message}`);
      else console[level](`[${namespace}] ${message}`, fields);
    };
  }
  return logger;
}

/**
 * The logger used when the app gives none: debug and info only with `DEBUG=express-platform-login:*`;
 * warn and error always, on `console.warn` / `console.error` (or, when `DEBUG` enables their
 * namespace, there instead, so a line is never written twice). A mistake the package sees — a
 * refused entry, a 5xx answer — must not need `DEBUG` to be found.
 */
export const defaultLogger = (namespace?: string): PlatformLogger => levelLogger(namespace, true);

export function isPlatformLogger(value: unknown): value is PlatformLogger {
  return (
    typeof value === 'object' &&
    value !== null &&
    LEVELS.every((level) => typeof (value as Record<string, unknown>)[level] === 'function')
  );
}

/** Query parameters whose values never reach a log line. */
const SECRET_PARAMETERS = /^(code|access_token|refresh_token|client_secret|id_token|state)$/i;

/** `url` (a path with query, or an absolute URL) with secret query values replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const fragmentStart = url.indexOf('#', queryStart);
  const query = url.slice(queryStart + 1, fragmentStart === -1 ? undefined : fragmentStart);
  const redacted = query
    .split('&')
    .map((pair) => {
      const rawName = pair.split('=', 1)[0]!;
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        // A malformed escape still has to be judged by its raw name.
      }
      return SECRET_PARAMETERS.test(name.trim()) ? `${rawName}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, queryStart)}?${redacted}`;
}
