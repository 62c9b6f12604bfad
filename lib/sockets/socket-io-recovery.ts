// socket.io's connection state recovery resumes a socket that lost its transport for a moment with
// its `data` restored — the SocketLogin that was closed when the old transport went — and, by
// default (`skipMiddlewares: true`), without running the `io.use` middlewares: nothing would check
// or follow that login again, and it would keep answering after a logout. The namespace's
// `connection` event still fires for a resumed socket, so the socket middleware hooks each
// namespace it serves (once) and has every resumed socket there checked again.
import {
  SocketLogin,
  LOGIN_ENDED_CLOSE_CODE,
  type LoginEnd,
  type SocketGate,
} from './socket-login';
import type { SocketIoNamespace, SocketIoSocket } from './socket-io-types';

/** What the adapter does with a socket's login: attach it, or end the socket without one. */
interface SocketIoBinding {
  attach(socket: SocketIoSocket, login: SocketLogin): void;
  end(socket: SocketIoSocket, end: LoginEnd): void;
}

/** The resumed sockets of the namespaces one socket middleware serves. */
export class SocketIoRecovery {
  readonly #sockets: SocketGate;
  readonly #binding: SocketIoBinding;
  readonly #hooked = new WeakSet<SocketIoNamespace>();
  /** Resumed sockets the middleware checked itself (`skipMiddlewares: false`). */
  readonly #checked = new WeakSet<SocketIoSocket>();

  constructor(sockets: SocketGate, binding: SocketIoBinding) {
    this.#sockets = sockets;
    this.#binding = binding;
  }

  /**
   * Hooks the socket's namespace, once. With the default in-memory adapter a socket is resumed
   * only by the process and namespace that served it, so the namespace was hooked by then.
   */
  watch(socket: SocketIoSocket): void {
    const nsp = socket.nsp;
    if (nsp === undefined || this.#hooked.has(nsp)) return;
    this.#hooked.add(nsp);
    // Before the app's own `connection` listeners, which read `socket.data.platformLogin`.
    nsp.prependListener('connection', (resumed: SocketIoSocket) => this.#resumed(resumed));
  }

  /** The middleware authenticated this socket itself: its `connection` needs nothing more. */
  checked(socket: SocketIoSocket): void {
    if (socket.recovered === true) this.#checked.add(socket);
  }

  #resumed(socket: SocketIoSocket): void {
    if (socket.recovered !== true || this.#checked.has(socket)) return;
    const previous: unknown = socket.data?.platformLogin;
    if (previous instanceof SocketLogin) {
      // A login of the same player at once (the app's handler reads it now), usable once the
      // handshake's session cookie has been authenticated again; ended (4401) if that fails.
      this.#binding.attach(socket, this.#sockets.reauthenticate(socket.request, previous));
      return;
    }
    // Data restored from elsewhere (an adapter that stores sessions serialised): no login to stand
    // in. The socket has none until its handshake is authenticated again.
    socket.data.platformLogin = undefined;
    this.#sockets.authenticate(socket.request).then(
      (login) => {
        if (socket.connected === false) return login.close();
        this.#binding.attach(socket, login);
      },
      () => this.#binding.end(socket, { code: LOGIN_ENDED_CLOSE_CODE, error: 'login_required' }),
    );
  }
}
