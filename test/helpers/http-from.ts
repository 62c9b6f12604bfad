// Requests from a chosen local address: the tests bind clients to different 127.0.0.x addresses so
// the app sees different client addresses (req.ip) on one machine. The request line goes out as
// written (no URL normalisation), so path spellings such as `//` or `%2F` reach the server as sent.
import { request, type IncomingHttpHeaders, type RequestOptions, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

/** What came back. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An app listening on 127.0.0.1. */
export interface Listening {
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** Starts `app` on 127.0.0.1 on a free port. */
export async function listen(app: Express): Promise<Listening> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Sends one request to 127.0.0.1 with its request line as written, and reads the whole answer. */
export function sendRaw(options: RequestOptions): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', ...options }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends one request from `localAddress` (e.g. `127.0.0.2`) to the app on `port`. */
export function sendFrom(
  localAddress: string,
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return sendRaw({
    port,
    localAddress,
    agent: false,
    method: options.method ?? 'GET',
    path,
    headers: options.headers ?? {},
  });
}
