// The socket.io adapter: an engine middleware that answers a handshake without a login 401 (no
// socket, no upgrade), and a socket middleware that gives each socket its login
// (`socket.data.platformLogin`) and disconnects it when the login ends anywhere. Typed
// structurally: the package does not import socket.io.
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { answerFor } from '../http/respond-error';
import { refusal } from './refusal';
import {
  SocketLogin,
  LOGIN_ENDED_CLOSE_CODE,
  type LoginEnd,
  type SocketGate,
} from './socket-login';

/** The part of a socket.io Socket the adapter uses. */
export interface SocketIoSocket {
  readonly request: IncomingMessage;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- socket.io's own type for it
  data: any;
  emit(event: string, ...args: unknown[]): unknown;
  disconnect(close?: boolean): unknown;
  once(event: 'disconnect', listener: () => void): unknown;
  /** False once the socket disconnected. */
  readonly connected?: boolean;
  /** True for a socket socket.io resumed (connection state recovery), its `data` restored. */
  readonly recovered?: boolean;
  /** The socket's namespace, whose `connection` event a resumed socket still fires. */
  readonly nsp?: {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- EventEmitter's own listener type
    prependListener(event: 'connection', listener: (...args: any[]) => void): unknown;
  };
}

/** The event a socket is sent before it is disconnected at the end of its login. */
export const LOGIN_ENDED_EVENT = 'platform:login_ended';

/**
 * For `io.engine.use(...)`: a handshake without a live login is answered with the package's status
 * (401 `login_required`, …) and a JSON `{ error }` body, before engine.io opens anything — on the
 * long-polling handshake and on a direct WebSocket upgrade alike. Requests of an engine session
 * already open (`sid`) were authenticated at its handshake and pass.
 */
export function socketIoEngineMiddleware(
  sockets: SocketGate,
): (req: IncomingMessage, res: unknown, next: (error?: unknown) => void) => void {
  return (req, res, next) => {
    if (new URL(req.url ?? '/', 'http://engine.invalid').searchParams.has('sid')) return next();
    sockets.authenticate(req).then(
      // Only a check here: the socket's own login is made by the socket middleware, once the
      // client joins a namespace (a handshake that never does must leave nothing followed).
      (login) => {
        login.close();
        next();
      },
      (error: unknown) => {
        if (res instanceof ServerResponse) {
          sockets.report(req, error);
          const { status, headers, body } = refusal(error);
          res.writeHead(status, headers).end(body);
        } else sockets.refuse((res as { socket: Duplex }).socket, error, req);
      },
    );
  };
}

/**
 * For `io.use(...)`: sets `socket.data.platformLogin` (a SocketLogin) and, when the login ends
 * anywhere, emits `platform:login_ended` `{ code: 4401, error }` and disconnects the socket. A
 * socket without a login fails its connection (`connect_error` with `data.error`).
 *
 * socket.io's connection state recovery resumes a socket that lost its transport for a moment with
 * its `data` restored — the SocketLogin that was closed when the old transport went — and, by
 * default (`skipMiddlewares: true`), without running this middleware: nothing would check or follow
 * that login again. The namespace's `connection` event still fires for a resumed socket, so each
 * namespace served is hooked (once) to have its resumed sockets checked again. With the default
 * in-memory adapter a socket is resumed only by the process and namespace that served it, so the
 * namespace was hooked by then.
 */
export function socketIoMiddleware(
  sockets: SocketGate,
): (socket: SocketIoSocket, next: (error?: Error) => void) => void {
  const hooked = new WeakSet<object>();
  /** Resumed sockets this middleware authenticated itself (`skipMiddlewares: false`). */
  const checked = new WeakSet<SocketIoSocket>();
  const resumed = (socket: SocketIoSocket): void => {
    if (socket.recovered !== true || checked.has(socket)) return;
    const previous: unknown = socket.data?.platformLogin;
    if (previous instanceof SocketLogin) {
      // A login of the same player at once (the app's handler reads it now), usable once the
      // handshake's session cookie has been authenticated again; ended (4401) if that fails.
      attach(socket, sockets.reauthenticate(socket.request, previous));
      return;
    }
    // Data restored from elsewhere (an adapter that stores sessions serialised): no login to stand
    // in. The socket has none until its handshake is authenticated again.
    socket.data.platformLogin = undefined;
    sockets.authenticate(socket.request).then(
      (login) => {
        if (socket.connected === false) return login.close();
        attach(socket, login);
      },
      () => endSocket(socket, { code: LOGIN_ENDED_CLOSE_CODE, error: 'login_required' }),
    );
  };
  return (socket, next) => {
    const { nsp } = socket;
    if (nsp !== undefined && !hooked.has(nsp)) {
      hooked.add(nsp);
      // Before the app's own `connection` listeners, which read `socket.data.platformLogin`.
      nsp.prependListener('connection', resumed);
    }
    sockets.authenticate(socket.request).then(
      (login: SocketLogin) => {
        // A resumed socket whose middlewares run drops its old login here, not on `connection`.
        if (socket.recovered === true) checked.add(socket);
        attach(socket, login);
        next();
      },
      (error: unknown) => {
        sockets.report(socket.request, error);
        const code = answerFor(error).error;
        // The client sees the code only: a message could carry internals.
        next(Object.assign(new Error(code), { data: { error: code } }));
      },
    );
  };
}

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
