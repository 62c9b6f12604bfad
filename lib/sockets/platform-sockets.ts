// Authenticates a WebSocket upgrade from the session cookie, framework-neutrally: the app's
// express-session middleware reads the session, the token store says whether its login lives, the
// refresh coordinator renews a token near expiry (once across processes), and the login watch
// tells the socket when the login ends. The `ws` and socket.io adapters (ws-upgrade.ts,
// socket-io.ts) are thin layers over `authenticate` and `refuse`.
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { promisify } from 'node:util';
import type { Request } from 'express';
import { crossOriginRequest, LoginRequiredError, SetupError } from '../errors';
import { storeFailed } from '../redis/redis-errors';
import type { RefreshCoordinator } from '../core/refresh';
import { PlayerContext, type ApiSettings } from '../http/player-context';
import { sessionTtlMsOf } from '../core/session-lifetime';
import { hasSession } from '../http/require-session';
import type { LoginWatch } from './login-watch';
import { SocketLogin, type SocketGate } from './socket-login';
import type { LoginAccess } from './store-access';
import { wsUpgrade, type WsServer, type WsSocket, type WsUpgradeOptions } from './ws-upgrade';
import { socketIoEngineMiddleware, socketIoMiddleware } from './socket-io';
import { refusal } from './refusal';

/**
 * express-session's middleware (what `session({...})` returns), run on an upgrade request that has
 * no `req.session` yet. Its response is a stand-in: nothing is written and the session is not saved.
 */
export type SessionMiddleware = (
  // `never`: any (req, res, next) middleware fits, Express's RequestHandler included.
  req: never,
  res: never,
  next: (error?: unknown) => void,
) => void;

/** Options of `login.sockets()`. */
export interface SocketsOptions {
  /**
   * The app's express-session middleware (the same one `app.use()` runs), to read the session of an
   * upgrade request. Not needed where something ran it already (`io.engine.use(session)`).
   */
  session?: SessionMiddleware;
}

/** What the sockets work with (one set per PlatformLogin). */
export interface SocketsDeps {
  access: LoginAccess;
  refresher: RefreshCoordinator;
  api: ApiSettings;
  watch: LoginWatch;
  /**
   * True when the browser says a page of another origin (not one of `gameOrigins`) started the
   * request: the cross-site check of `logout()` and `csrfProtection()`.
   */
  isCrossOrigin: (headers: IncomingMessage['headers']) => boolean;
  /** Tells the package's events of a refused upgrade: logged as a refused request is. */
  report: (req: IncomingMessage, error: unknown) => void;
}

/** The sockets of one PlatformLogin: `login.sockets({ session })`. */
export class PlatformSockets implements SocketGate {
  readonly #deps: SocketsDeps;
  readonly #session: SessionMiddleware | undefined;

  constructor(deps: SocketsDeps, options: SocketsOptions) {
    this.#deps = deps;
    this.#session = options.session;
  }

  /**
   * The login of an upgrade request (or any request carrying the session cookie). Rejects with
   * LoginRequiredError without one (no session, no login, or a login that has ended), with the
   * refresh's errors when its token is expired and cannot be renewed now, and StoreUnavailableError.
   * The returned login is followed until its `close()`: call it when the socket closes.
   */
  async authenticate(req: IncomingMessage): Promise<SocketLogin> {
    const checked = await this.#check(req);
    const login = new SocketLogin(checked.context);
    this.#follow(login, checked, req);
    return login;
  }

  /**
   * The login of a socket its library resumed with the old, closed login (socket.io's connection
   * state recovery, which skips the app's socket middlewares): a login of the same player, given
   * at once (the app's handlers read it synchronously) but unusable until the upgrade request is
   * authenticated again — its session cookie, the session's marker, the record — and ended when
   * that fails or finds another player. Followed again from then on.
   */
  reauthenticate(req: IncomingMessage, previous: SocketLogin): SocketLogin {
    return previous.reopened(async (login) => {
      const checked = await this.#check(req);
      if (checked.context.user.openId !== login.user.openId) throw new LoginRequiredError();
      // The socket went again while it was checked: nothing to follow (close() ran already).
      if (login.ended) return;
      login.resume(checked.context);
      this.#follow(login, checked, req);
    });
  }

  /** What an upgrade request's session and record say: its live login, or the package's error. */
  async #check(req: IncomingMessage) {
    // Before the session is read: a page of another site must not open a socket with the player's
    // cookie and read what it carries.
    if (this.#deps.isCrossOrigin(req.headers)) throw crossOriginRequest('A socket');
    const session = await this.#sessionOf(req);
    const marker = session.platformLogin;
    if (marker === undefined) throw new LoginRequiredError();
    const { access, refresher, api } = this.#deps;
    const sessionKey = access.keyOf((req as Request).sessionID);
    const sessionTtlMs = sessionTtlMsOf(session, api.sessionTtlMs);
    const state = await access.read(sessionKey);
    if (state.status !== 'found' || state.record.openId !== marker.openId)
      throw new LoginRequiredError();
    // A token near expiry is renewed before the socket opens, as a route's would be.
    const record = await refresher.forRequest(sessionKey, state.record, sessionTtlMs);
    // When the record leaves the store: the session's marker says when it was last set (free);
    // a session without one asks the store.
    const expiresAt = marker.recordExpiresAt ?? (await access.expiryOf(sessionKey, record.openId));
    return {
      sessionKey,
      context: new PlayerContext(sessionKey, record, refresher, api, sessionTtlMs),
      expiresAt,
    };
  }

  /**
   * Follows the login, and its session where the session store reports changes, until its
   * `close()`; one more read catches an end before the watch began.
   */
  #follow(
    login: SocketLogin,
    { sessionKey, expiresAt }: { sessionKey: string; expiresAt: number | undefined },
    req: IncomingMessage,
  ): void {
    const { watch } = this.#deps;
    const { sessionStore: store, sessionID: sid } = req as Request;
    login.following(watch.follow(sessionKey, login.listener, expiresAt, { store, sid }), () =>
      watch.confirm(sessionKey),
    );
    watch.check(sessionKey);
  }

  /**
   * Answers a refused upgrade on its raw socket and closes it: the error's status (401
   * `login_required`, 503 `store_unavailable` with Retry-After, …) with a JSON `{ error }` body, as
   * the package answers API clients. Anything else is a 500 `internal_error`. With `req`, the
   * refusal is also reported as the package's handlers report theirs (see {@link report}).
   */
  refuse(socket: Duplex, error: unknown, req?: IncomingMessage): void {
    if (req !== undefined) this.report(req, error);
    if (socket.destroyed) return;
    const { status, headers, body } = refusal(error);
    headers['Content-Length'] = String(Buffer.byteLength(body));
    headers.Connection = 'close';
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n${head.join('')}\r\n${body}`,
    );
  }

  /**
   * A `requestFailed` event (part `socket`) for a refused upgrade or handshake, logged at its code's
   * level as any refused request: a 503 while Redis stalls is an error line, a missing login debug.
   */
  report(req: IncomingMessage, error: unknown): void {
    this.#deps.report(req, error);
  }

  /**
   * For `ws`: an `upgrade` listener, `server.on('upgrade', sockets.ws(wss, (socket, login) => …))`
   * with `wss = new WebSocketServer({ noServer: true })`. No login: 401, no upgrade. The login's end
   * closes the socket with 4401. See docs/sockets.md.
   */
  ws<Socket extends WsSocket>(
    wss: WsServer<Socket>,
    onOpen: (socket: Socket, login: SocketLogin, req: IncomingMessage) => void,
    options?: WsUpgradeOptions,
  ): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
    return wsUpgrade(this, wss, onOpen, options);
  }

  /**
   * For socket.io: `io.engine.use(sockets.socketIo().engine)` answers a handshake without a login
   * 401; `io.use(sockets.socketIo().socket)` gives each socket `socket.data.platformLogin` and
   * disconnects it when the login ends. See docs/sockets.md.
   */
  socketIo() {
    return { engine: socketIoEngineMiddleware(this), socket: socketIoMiddleware(this) };
  }

  /** Runs the app's express-session middleware when nothing did yet. */
  async #sessionOf(req: IncomingMessage): Promise<Request['session']> {
    const withSession = req as Partial<Request>;
    if (!hasSession(withSession.session) && this.#session !== undefined) {
      // A stand-in response: express-session only wraps its writeHead/end, which nobody calls.
      await promisify(this.#session)(req as never, {} as never).catch((error: unknown) => {
        const what = "reading the socket's session";
        throw storeFailed({ store: 'session store', what }, error);
      });
    }
    if (!hasSession(withSession.session)) {
      throw new SetupError(
        "A socket was opened without its session: pass the app's express-session middleware, " +
          '`login.sockets({ session: sessionMiddleware })` (the same one given to `app.use()`).',
      );
    }
    return withSession.session;
  }
}
