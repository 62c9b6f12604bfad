// Writes simulator answers with node's own response API, so they are byte for byte the same under
// Express 4 and 5 and a fault can reshape them freely.
import type { ServerResponse } from 'node:http';

/** Headers RFC 6749 5.1 requires on token responses: they carry credentials. */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

export const JSON_TYPE = 'application/json;charset=UTF-8';

/** Sends `body` as JSON with `status`, never cached. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendBody(res, status, JSON_TYPE, JSON.stringify(body), headers);
}

/** Sends a complete body of any type, never cached. */
export function sendBody(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    ...NO_STORE,
    'Content-Type': contentType,
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  });
  res.end(body);
}
