// The `ws` adapter: an upgrade with a login becomes a WebSocket whose handler gets the login; one
// without is answered 401 and never upgraded. When the login ends anywhere the socket is closed
// with 4401. Typed structurally: the package does not import `ws`.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ignore } from '../util/ignore';
import type { LoginEnd, SocketGate, SocketLogin } from './socket-login';

/** The part of a `ws` WebSocket the adapter uses. */
export interface WsSocket {
  readonly readyState: number;
  close(code?: number, reason?: string): void;
  once(event: 'close', listener: () => void): unknown;
}

/** The part of a `ws` WebSocketServer (created with `{ noServer: true }`) the adapter uses. */
export interface WsServer<Socket extends WsSocket> {
  handleUpgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    callback: (socket: Socket, req: IncomingMessage) => void,
  ): void;
}

/** Options of {@link wsUpgrade}. */
export interface WsUpgradeOptions {
  /**
   * What happens to the socket when its login ends: `'close'` closes it with 4401 and the error
   * (`login_required` / `reauth_required`) as its reason; `'keep'` leaves it to the app's
   * `login.onEnd()`. Defaults to `'close'`.
   */
  onLoginEnd?: 'close' | 'keep';
}

/** ws's `WebSocket.CLOSING`: a socket at or past it is closed already. */
const CLOSING = 2;

/**
 * An `upgrade` listener for a Node HTTP server: `server.on('upgrade', wsUpgrade(sockets, wss, onOpen))`.
 * `onOpen(socket, login, req)` runs once the WebSocket is open with a live login; `login.close()`
 * is called for you when the socket closes. Check the path yourself before calling it when the
 * server has other upgrade routes.
 */
export function wsUpgrade<Socket extends WsSocket>(
  sockets: SocketGate,
  wss: WsServer<Socket>,
  onOpen: (socket: Socket, login: SocketLogin, req: IncomingMessage) => void,
  options: WsUpgradeOptions = {},
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const closes = options.onLoginEnd !== 'keep';
  return (req, socket, head) => {
    // A client that goes away while its session is read must not crash the process.
    socket.on('error', ignore);
    sockets.authenticate(req).then(
      (login) => {
        if (socket.destroyed) return login.close();
        wss.handleUpgrade(req, socket, head, (ws) => {
          socket.off('error', ignore);
          ws.once('close', () => login.close());
          if (closes) {
            login.onEnd((end: LoginEnd) => {
              if (ws.readyState < CLOSING) ws.close(end.code, end.error);
            });
          }
          if (!login.ended || !closes) onOpen(ws, login, req);
        });
      },
      (error: unknown) => sockets.refuse(socket, error, req),
    );
  };
}
