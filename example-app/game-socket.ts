// `GET /ws` (docs/example-app.md): a WebSocket opened with the session cookie. Without a login: 401,
// no upgrade. Once open: `{"type":"hello","openId":…}`; `{"type":"profile"}` is answered with the
// open API's /userinfo fetched with the player's token; when the login ends anywhere the package
// closes the socket with 4401.
import type { Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { PlatformLogin, SocketLogin, SocketsOptions } from 'express-platform-login';

/** What the socket answers a `profile` message with (the open API's status and JSON, as it answered). */
async function profileFrame(player: SocketLogin): Promise<Record<string, unknown>> {
  try {
    const answer = await player.fetch('/userinfo', { headers: { Accept: 'application/json' } });
    const body: unknown = await answer.json().catch(() => null);
    return { type: 'profile', status: answer.status, body };
  } catch (error) {
    // The package's errors carry a stable `error` code; nothing else is told to the client.
    const code = (error as { error?: unknown }).error;
    return { type: 'error', error: typeof code === 'string' ? code : 'internal_error' };
  }
}

function onOpen(ws: WebSocket, player: SocketLogin): void {
  ws.send(JSON.stringify({ type: 'hello', openId: player.user.openId }));
  // Messages that come while a fetch is under way share its answer: a burst from one socket asks
  // the platform once, not once per message.
  let fetching: Promise<Record<string, unknown>> | undefined;
  ws.on('message', (data) => {
    let message: { type?: unknown };
    try {
      message = JSON.parse(String(data)) as { type?: unknown };
    } catch {
      ws.send(JSON.stringify({ type: 'error', error: 'invalid_message' }));
      return;
    }
    if (message.type === 'profile') {
      fetching ??= profileFrame(player).finally(() => (fetching = undefined));
      void fetching.then((frame) => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
      });
    } else ws.send(JSON.stringify({ type: 'error', error: 'unknown_message' }));
  });
}

/** Serves `GET /ws` on `server`; other upgrade paths are refused. Returns the closer used at shutdown. */
export function attachGameSocket(
  server: Server,
  login: PlatformLogin,
  session: SocketsOptions['session'],
): { close(): void } {
  const wss = new WebSocketServer({ noServer: true });
  const upgrade = login.sockets({ session }).ws(wss, onOpen);
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname === '/ws') upgrade(req, socket, head);
    else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  return {
    // Upgraded sockets are not the HTTP server's to close: without this, shutdown waits for them.
    close() {
      for (const ws of wss.clients) {
        ws.close(1001, 'server_shutdown');
        setTimeout(() => ws.terminate(), 1000).unref(); // a client that never answers the close
      }
      wss.close();
    },
  };
}
