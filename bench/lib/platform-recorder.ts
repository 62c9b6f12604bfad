// A recording HTTP proxy in front of the simulated platform (the apps' PLATFORM_AUTH_URL): every
// POST /token noted with the player it was for (from its answer, or from the answer that issued
// the refresh token it presented), when it started and ended, and whether that token was retired.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { buffer as body } from 'node:stream/consumers';

/**
 * One call of the token endpoint as the proxy saw it: the player it was for (when its answer or an
 * earlier one says), performance.now() when it arrived and when its answer was sent on, its OAuth
 * error, and whether it was a refresh refused for a token this proxy had seen issued (retired).
 */
export interface TokenCall {
  grant: 'authorization_code' | 'refresh_token' | 'other';
  openId: string | undefined;
  startMs: number;
  endMs: number;
  status: number;
  error: string | undefined;
  retired: boolean;
}

export type PlatformRecorder = { url: string; calls: TokenCall[]; close(): Promise<void> };

/** Starts the proxy on a free loopback port, forwarding everything to `target` (the simulator). */
export async function startPlatformRecorder(target: string): Promise<PlatformRecorder> {
  const { hostname: host, port } = new URL(target);
  const calls: TokenCall[] = [];
  /** Every refresh token an answer issued, and whose it is. */
  const issuedTo = new Map<string, string>();
  /** Notes a token call from what was sent and what came back. */
  const note = (params: URLSearchParams, status: number, received: Buffer, startMs: number) => {
    const grantType = params.get('grant_type');
    const grant =
      grantType === 'authorization_code' || grantType === 'refresh_token' ? grantType : 'other';
    let parsed: { open_id?: string; refresh_token?: string; error?: string } = {};
    try {
      parsed = JSON.parse(received.toString()) as typeof parsed;
    } catch {
      // A faulted or empty answer: nothing to note but its status.
    }
    if (parsed.refresh_token !== undefined && parsed.open_id !== undefined)
      issuedTo.set(parsed.refresh_token, parsed.open_id);
    const known = issuedTo.get(params.get('refresh_token') ?? '');
    const retired =
      grant === 'refresh_token' && parsed.error === 'invalid_grant' && known !== undefined;
    const [openId, error] = [parsed.open_id ?? known, parsed.error];
    calls.push({ grant, openId, startMs, endMs: performance.now(), status, error, retired });
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const startMs = performance.now();
      const sent = await body(req);
      const { method, url: path, headers } = req;
      const upstream = request({ host, port, method, path, headers });
      upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      upstream.on('response', (answer) => {
        void body(answer).then((received) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers).end(received);
          if (method === 'POST' && path?.split('?')[0] === '/token')
            note(new URLSearchParams(sent.toString()), answer.statusCode ?? 0, received, startMs);
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
