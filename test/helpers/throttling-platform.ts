// A platform that rate-limits its token endpoint per client, as real ones do: in front of the
// simulator over real HTTP, it lets `callsPerSecond` token calls through in any second and answers
// the rest 429 with `Retry-After: retryAfterSeconds` and an OAuth body. It records the code of
// every token call that reached it, so a test can tell whose made-up codes the platform saw.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ThrottlingPlatform {
  url: string;
  /** The `code` of each authorization_code call that reached the platform, in order. */
  readonly codes: string[];
  /** Token calls answered 429 by the limit. */
  readonly throttled: number;
  /** When the last token call arrived (epoch ms), 0 before any. */
  readonly lastCallAt: number;
  close(): Promise<void>;
}

export async function startThrottlingPlatform(
  simulatorUrl: string,
  callsPerSecond: number,
  retryAfterSeconds: number,
): Promise<ThrottlingPlatform> {
  const accepted: number[] = [];
  const codes: string[] = [];
  let throttled = 0;
  let lastCallAt = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST' && req.url?.startsWith('/token')) {
        const now = Date.now();
        lastCallAt = now;
        const code = new URLSearchParams(body.toString()).get('code');
        if (code !== null) codes.push(code);
        while (accepted.length > 0 && accepted[0]! <= now - 1000) accepted.shift();
        if (accepted.length >= callsPerSecond) {
          throttled += 1;
          res.writeHead(429, {
            'Content-Type': 'application/json',
            'Retry-After': String(retryAfterSeconds),
          });
          res.end(JSON.stringify({ error: 'temporarily_unavailable' }));
          return;
        }
        accepted.push(now);
      }
      const headers = { ...req.headers } as Record<string, string>;
      delete headers.host;
      fetch(`${simulatorUrl}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
      })
        .then(async (answer) => {
          const type = answer.headers.get('content-type');
          res.writeHead(answer.status, type === null ? {} : { 'Content-Type': type });
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    codes,
    get throttled() {
      return throttled;
    },
    get lastCallAt() {
      return lastCallAt;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
