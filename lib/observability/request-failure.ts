// What the `requestFailed` event says of a request the package could not serve: where it failed,
// the request (its method, its URL redacted, an id to join the app's log lines) and the error.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { isPlatformLoginError } from '../errors';
import type { RequestFailure } from './events';
import { redactUrl } from './logger';

/** What an id taken from the app or a client may look like: short, no spaces or control characters. */
const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/**
 * The request's id: the app's own (`req.id`, as pino-http and express-request-id set it), else the
 * client's or the proxy's `X-Request-Id` when it looks like an id, else a new random one.
 */
export function requestIdOf(req: Pick<Request, 'headers'> & { id?: unknown }): string {
  const own = req.id;
  if (typeof own === 'number') return String(own);
  if (typeof own === 'string' && REQUEST_ID.test(own)) return own;
  const header = req.headers['x-request-id'];
  if (typeof header === 'string' && REQUEST_ID.test(header)) return header;
  return randomUUID();
}

/** The event's payload for `err` on `req`; an error not of the package gives only its name. */
export function requestFailure(
  err: unknown,
  req: Pick<IncomingMessage, 'method' | 'url' | 'headers'> & { originalUrl?: string; id?: unknown },
  part: RequestFailure['part'],
): RequestFailure {
  const known = isPlatformLoginError(err);
  return {
    part,
    method: req.method ?? 'GET',
    url: redactUrl(req.originalUrl ?? req.url ?? ''),
    requestId: requestIdOf(req),
    code: known ? err.code : undefined,
    status: known ? err.status : undefined,
    message: known ? err.message : err instanceof Error ? err.name : typeof err,
    logLevel: known ? err.logLevel : 'error',
  };
}
