// socket.io's connection state recovery resumes a socket that lost its transport for a moment with
// its `data` restored — the SocketLogin that was closed when the old transport went — and, by
// default (`skipMiddlewares: true`), without running the `io.use` middlewares: nothing would check
// or follow that login again, and it would keep answering after a logout. The namespace's
// `connection` event still fires for a resumed socket, so the socket middleware hooks each
// namespace it serves (once) and has every resumed socket there checked again.
import { SocketLogin, LOGIN_ENDED_CLOSE_CODE, type LoginEnd } from './socket-login';
import type { PlatformSockets } from './platform-sockets';
import type { SocketIoNamespace, SocketIoSocket } from './socket-io-types';

/** What the adapter does with a socket's login: attach it, or end the socket without one. */
interface SocketIoBinding {
  attach(socket: SocketIoSocket, login: SocketLogin): void;
  end(socket: SocketIoSocket, end: LoginEnd): void;
}

/**
 * The resumed sockets of the namespaces one socket middleware serves: `watch` hooks a socket's
 * namespace, once (with the default in-memory adapter a socket is resumed only by the process and
 * namespace that served it, so the namespace was hooked by then); `checked` marks a resumed socket
 * the middleware authenticated itself (`skipMiddlewares: false`): its `connection` needs no more.
 */
export function socketIoRecovery(
  sockets: PlatformSockets,
  binding: SocketIoBinding,
): { watch(socket: SocketIoSocket): void; checked(socket: SocketIoSocket): void } {
  const hooked = new WeakSet<SocketIoNamespace>();
  const checked = new WeakSet<SocketIoSocket>();
  const resumed = (socket: SocketIoSocket): void => {
    if (socket.recovered !== true || checked.has(socket)) return;
    const previous: unknown = socket.data?.platformLogin;
    if (previous instanceof SocketLogin) {
      // A login of the same player at once (the app's handler reads it now), usable once the
      // handshake's session cookie has been authenticated again; ended (4401) if that fails.
      binding.attach(socket, sockets.reauthenticate(socket.request, previous));
      return;
    }
    // Data restored from elsewhere (an adapter that stores sessions serialised): no login to stand
    // in. The socket has none until its handshake is authenticated again.
    socket.data.platformLogin = undefined;
    sockets.authenticate(socket.request).then(
      (login) => {
        if (socket.connected === false) return login.close();
        binding.attach(socket, login);
      },
      () => binding.end(socket, { code: LOGIN_ENDED_CLOSE_CODE, error: 'login_required' }),
    );
  };
  return {
    watch(socket) {
      const nsp = socket.nsp;
      if (nsp === undefined || hooked.has(nsp)) return;
      hooked.add(nsp);
      // Before the app's own `connection` listeners, which read `socket.data.platformLogin`.
      nsp.prependListener('connection', resumed);
    },
    checked(socket) {
      if (socket.recovered === true) checked.add(socket);
    },
  };
}
