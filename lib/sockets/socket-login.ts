// What a socket's handler gets: the player, a fresh token and the open-API fetch (the very ones a
// route has), and word when the login ends anywhere (`onEnd`, `signal`), on every process.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { inspect } from 'node:util';
import { hasCode, LoginRequiredError, reauthRequired, type PlatformLoginError } from '../errors';
import { endsLogin } from '../core/failure-policy';
import type { PlayerContext, PlatformUser } from '../http/player-context';
import type { OpenApiRequestInit } from '../open-api/open-api-client';
import type { LoginListener } from './login-watch';

/** The WebSocket close code of a login that ended (4000–4999: for applications; 4401 echoes HTTP 401). */
export const LOGIN_ENDED_CLOSE_CODE = 4401;

/** How a socket's login ended, as told to `onEnd` listeners. */
export interface LoginEnd {
  /** The close code the adapters use: `4401`. */
  code: number;
  /** `reauth_required` when the platform refused a refresh of this socket, else `login_required`. */
  error: 'login_required' | 'reauth_required';
}

/**
 * What the ws and socket.io adapters use of PlatformSockets: typed here, so the adapters need not
 * import platform-sockets.ts, which imports them.
 */
export interface SocketGate {
  authenticate(req: IncomingMessage): Promise<SocketLogin>;
  reauthenticate(req: IncomingMessage, previous: SocketLogin): SocketLogin;
  refuse(socket: Duplex, error: unknown, req?: IncomingMessage): void;
  /** Tells the package's events of a refused upgrade or handshake (`requestFailed`, part `socket`). */
  report(req: IncomingMessage, error: unknown): void;
}

/** The login behind one socket. Call `close()` when the socket closes. */
export class SocketLogin {
  #context: PlayerContext;
  readonly #abort = new AbortController();
  readonly #endListeners = new Set<(end: LoginEnd) => void>();
  #end: LoginEnd | undefined;
  #unfollow: (() => void) | undefined;
  /**
   * When the token record leaves the store, as last read (`Infinity`: not known). Past it the
   * token is not used until the store confirms a later one: Redis may keep an expired key for
   * minutes, and nothing would tell the socket meanwhile.
   */
  #expiresAt = Infinity;
  /** Asks the login watch to read the record and its expiry now. */
  #confirm: (() => Promise<void>) | undefined;
  /** While set, the login is being checked again (a recovered socket): token()/fetch() wait. */
  #checking: Promise<void> | undefined;
  /** What the login watch calls: not part of the public members. */
  readonly listener: LoginListener;

  constructor(context: PlayerContext) {
    this.#context = context;
    this.listener = {
      openId: context.user.openId,
      renewed: (record) => this.#context.renewed(record),
      expires: (expiresAt) => void (this.#expiresAt = expiresAt),
      ended: () => this.#ended('login_required'),
    };
  }

  /**
   * @internal Binds the watch's unfollow, called on `close()` and at the end, and its confirm,
   * called when the token is asked for past the record's known expiry.
   */
  following(unfollow: () => void, confirm?: () => Promise<void>): void {
    this.#unfollow = unfollow;
    this.#confirm = confirm;
    if (this.#end !== undefined) unfollow();
  }

  /**
   * @internal For `reauthenticate()`: a login of the same player, not followed, and unusable until
   * `recheck` settles; a failed check ends it.
   */
  reopened(recheck: (login: SocketLogin) => Promise<void>): SocketLogin {
    const login = new SocketLogin(this.#context);
    login.#checking = recheck(login)
      .catch(() => login.#ended('login_required'))
      .finally(() => (login.#checking = undefined));
    return login;
  }

  /** @internal The recheck's fresh context (the same player, the record as read now). */
  resume(context: PlayerContext): void {
    this.#context = context;
  }

  /** The player, as `req.platformUser`. */
  get user(): PlatformUser {
    return this.#context.user;
  }

  /** True once the login has ended (or `close()` was called). */
  get ended(): boolean {
    return this.#end !== undefined || this.#abort.signal.aborted;
  }

  /**
   * Aborted when the login ends, with the LoginRequiredError (`LOGIN_REQUIRED` / `REAUTH_REQUIRED`) as its reason:
   * pass it to long work on the player's behalf.
   */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /**
   * The access token, refreshed first when it is near expiry, once across processes (as
   * `req.platformToken()`). A refusal that ends the login also ends this socket's login.
   */
  token(): Promise<string> {
    return this.#usable().then(() => this.#context.token().catch(this.#failed));
  }

  /** Calls the open API with the player's token (as `req.platformFetch()`). */
  fetch(pathOrUrl: string | URL, init?: OpenApiRequestInit): Promise<Response> {
    return this.#usable().then(() => this.#context.fetch(pathOrUrl, init).catch(this.#failed));
  }

  /** Calls `listener` once when the login ends (at once if it has ended already). */
  onEnd(listener: (end: LoginEnd) => void): void {
    if (this.#end !== undefined) listener(this.#end);
    else this.#endListeners.add(listener);
  }

  /** Stops following the login (the socket closed); no `onEnd` listener is called after it. */
  close(): void {
    this.#endListeners.clear();
    this.#stop(new LoginRequiredError('The socket closed.'));
  }

  /** What a log of the socket's login shows: never the tokens. */
  [inspect.custom](): string {
    return `SocketLogin { openId: ${JSON.stringify(this.user.openId)} }`;
  }
  toJSON(): { openId: string } {
    return { openId: this.user.openId };
  }

  /** Resolves once the token may be used (see `#expiresAt`); rejects with LoginRequiredError. */
  async #usable(): Promise<void> {
    if (this.#checking !== undefined) await this.#checking;
    if (this.ended) throw new LoginRequiredError();
    if (Date.now() < this.#expiresAt) return;
    // Past the known expiry, before (or while) the watch's timer reads the record: ask now.
    await this.#confirm?.();
    if (this.ended || Date.now() >= this.#expiresAt) throw new LoginRequiredError();
  }

  readonly #failed = (error: unknown): never => {
    if (endsLogin(error)) {
      this.#ended(
        hasCode(error, 'ERR_PLATFORM_LOGIN_REQUIRED') ? 'login_required' : 'reauth_required',
      );
    }
    throw error;
  };

  /** Stops following the login and aborts the signal (once) with `reason`. */
  #stop(reason: PlatformLoginError): void {
    this.#unfollow?.();
    this.#unfollow = undefined;
    if (!this.#abort.signal.aborted) this.#abort.abort(reason);
  }

  #ended(error: LoginEnd['error']): void {
    if (this.#end !== undefined) return;
    const end: LoginEnd = { code: LOGIN_ENDED_CLOSE_CODE, error };
    this.#end = end;
    this.#stop(error === 'reauth_required' ? reauthRequired() : new LoginRequiredError());
    const listeners = [...this.#endListeners];
    this.#endListeners.clear();
    for (const listener of listeners) listener(end);
  }
}
