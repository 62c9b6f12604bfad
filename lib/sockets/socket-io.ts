// The socket.io adapter: an engine middleware that answers a handshake without a login 401 (no
// socket, no upgrade), and a socket middleware that gives each socket its login
// (`socket.data.platformLogin`) and disconnects it when the login ends anywhere. Typed
// structurally: the package does not import socket.io.
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { answerFor } from '../http/respond-error';
import { refusal } from './refusal';
import type { LoginEnd, SocketLogin } from './socket-login';
import type { PlatformSockets } from './platform-sockets';
import { socketIoRecovery } from './socket-io-recovery';
import type { SocketIoSocket } from './socket-io-types';

/** The event a socket is sent before it is disconnected at the end of its login. */
export const LOGIN_ENDED_EVENT = 'platform:login_ended';

/** True for a request of an engine session already open: its `sid` query parameter (the public URL). */
const hasEngineSession = (req: IncomingMessage): boolean =>
  new URL(req.url ?? '/', 'http://engine.invalid').searchParams.has('sid');

/**
 * For `io.engine.use(...)`: a handshake without a live login is answered with the package's status
 * (401 `login_required`, …) and a JSON `{ error }` body, before engine.io opens anything — on the
 * long-polling handshake and on a direct WebSocket upgrade alike. Requests of an engine session
 * already open (`sid`) were authenticated at its handshake and pass.
 */
export function socketIoEngineMiddleware(
  sockets: PlatformSockets,
): (req: IncomingMessage, res: unknown, next: (error?: unknown) => void) => void {
  return (req, res, next) => {
    if (hasEngineSession(req)) return next();
    sockets.authenticate(req).then(
      // Only a check here: the socket's own login is made by the socket middleware, once the
      // client joins a namespace (a handshake that never does must leave nothing followed).
      (login) => {
        login.close();
        next();
      },
      (error: unknown) => {
        if (res instanceof ServerResponse) {
          const { status, headers, body } = refusal(error);
          res.writeHead(status, headers).end(body);
        } else sockets.refuse((res as { socket: Duplex }).socket, error);
      },
    );
  };
}

/**
 * For `io.use(...)`: sets `socket.data.platformLogin` (a SocketLogin) and, when the login ends
 * anywhere, emits `platform:login_ended` `{ code: 4401, error }` and disconnects the socket. A
 * socket without a login fails its connection (`connect_error` with `data.error`). A socket that
 * socket.io resumes past its middlewares (connection state recovery) is checked again on its
 * namespace's `connection` event (socket-io-recovery.ts).
 */
export function socketIoMiddleware(
  sockets: PlatformSockets,
): (socket: SocketIoSocket, next: (error?: Error) => void) => void {
  const recovery = socketIoRecovery(sockets, { attach, end: endSocket });
  return (socket, next) => {
    recovery.watch(socket);
    sockets.authenticate(socket.request).then(
      (login: SocketLogin) => {
        // A resumed socket whose middlewares run (`skipMiddlewares: false`) drops its old login.
        recovery.checked(socket);
        attach(socket, login);
        next();
      },
      (error: unknown) => {
        const code = answerFor(error).error;
        // The client sees the code only: a message could carry internals.
        next(Object.assign(new Error(code), { data: { error: code } }));
      },
    );
  };
}

/**
 * Gives `socket` its login: `socket.data.platformLogin`, closed when the socket disconnects, and
 * at the login's end `platform:login_ended` `{ code: 4401, error }` then a disconnect.
 */
function attach(socket: SocketIoSocket, login: SocketLogin): void {
  socket.data.platformLogin = login;
  socket.once('disconnect', () => login.close());
  login.onEnd((end: LoginEnd) => endSocket(socket, end));
}

/** socket.io has no close codes: the end is told in an event, then the socket disconnected. */
function endSocket(socket: SocketIoSocket, end: LoginEnd): void {
  socket.emit(LOGIN_ENDED_EVENT, end);
  socket.disconnect(true);
}
