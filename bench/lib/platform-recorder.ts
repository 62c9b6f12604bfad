// A recording HTTP proxy in front of the simulated platform, in the driver's process: the app
// processes are given its URL as PLATFORM_AUTH_URL, and every POST /token is noted with the player
// it was for (from the answer's open_id, or, for a refused refresh token, from the answer that had
// issued it), when it started and ended, and whether it presented a refresh token a rotation had
// already retired. The simulator counts retired tokens presented (`retiredTokenReuses`); this says
// whose they were and when, and which requests of a player carried a refresh.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/** One call of the token endpoint as the proxy saw it. */
export interface TokenCall {
  grant: 'authorization_code' | 'refresh_token' | 'other';
  /** The player (open_id) the call was for; undefined when neither the answer nor an earlier one says. */
  openId: string | undefined;
  /** performance.now() when the call arrived and when its answer was sent on. */
  startMs: number;
  endMs: number;
  status: number;
  /** The OAuth error code of a refused call. */
  error: string | undefined;
  /** A refresh refused for a refresh token this proxy had seen issued: one a rotation retired. */
  retired: boolean;
}

export interface PlatformRecorder {
  url: string;
  calls: TokenCall[];
  close(): Promise<void>;
}

function body(message: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.on('end', () => resolve(Buffer.concat(chunks)));
    message.on('error', reject);
  });
}

/** Starts the proxy on a free loopback port, forwarding everything to `target` (the simulator). */
export async function startPlatformRecorder(target: string): Promise<PlatformRecorder> {
  const { hostname, port } = new URL(target);
  const calls: TokenCall[] = [];
  /** Every refresh token an answer issued, and whose it is. */
  const issuedTo = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const startMs = performance.now();
      const sent = await body(req);
      const isToken = req.method === 'POST' && req.url?.split('?')[0] === '/token';
      const params = isToken ? new URLSearchParams(sent.toString()) : undefined;
      const upstream = request({
        host: hostname,
        port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      });
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      upstream.on('response', (answer) => {
        void body(answer).then((received) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers).end(received);
          if (params === undefined) return;
          const grantType = params.get('grant_type');
          const grant =
            grantType === 'authorization_code' || grantType === 'refresh_token'
              ? grantType
              : 'other';
          let parsed: { open_id?: string; refresh_token?: string; error?: string } = {};
          try {
            parsed = JSON.parse(received.toString()) as typeof parsed;
          } catch {
            // A faulted or empty answer: nothing to note but its status.
          }
          if (parsed.refresh_token !== undefined && parsed.open_id !== undefined)
            issuedTo.set(parsed.refresh_token, parsed.open_id);
          const presented = params.get('refresh_token') ?? undefined;
          const known = presented === undefined ? undefined : issuedTo.get(presented);
          calls.push({
            grant,
            openId: parsed.open_id ?? known,
            startMs,
            endMs: performance.now(),
            status: answer.statusCode ?? 0,
            error: parsed.error,
            retired:
              grant === 'refresh_token' && parsed.error === 'invalid_grant' && known !== undefined,
          });
        });
      });
      upstream.end(sent);
    })();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
