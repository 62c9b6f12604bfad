// What a route handler gets from the middleware for one request: the player, a fresh token on
// demand, and a fetch to the open API that carries the token. One small object per request; its
// methods live on the class, not in per-request closures.
import type { RefreshCoordinator } from '../core/refresh';
import type { TokenRecord } from '../core/token-record';
import { inspect } from 'node:util';
import { LoginRequiredError } from '../errors';
import type { OpenApiClient, OpenApiRequestInit } from '../open-api/open-api-client';

/** The logged-in player, as `req.platformUser`. */
export interface PlatformUser {
  /** Identifier of the player within this application. */
  openId: string;
  /** The player's identifier across the game's registrations, when the platform sent one. */
  unionId?: string;
  /** The registration the player came through (`registrationName` for the first one). */
  registration: string;
  /** Scopes the player granted. */
  scope: string[];
  /** When the current access token expires, epoch milliseconds (not a secret; for display and logs). */
  tokenExpiresAt: number;
}

/** How a context reaches the open API, computed once from the options. */
export interface ApiSettings {
  /** The open-API client shared by routes, sockets and jobs. */
  client: OpenApiClient;
  /** Session lifetime (`sessionMaxAgeSeconds`) when the session cookie has no `maxAge`. */
  sessionTtlMs: number;
  /** The first registration's name, which its records do not carry. */
  firstRegistration: string;
  /** Several registrations: a login's unionid index entry is renewed with it (core/player-join.ts). */
  joinsPlayers?: boolean;
}

/** A login as jobs and the `afterLogin` hook get it: what a route gets on `req`. */
export interface LoggedInPlayer {
  /** The player, as `req.platformUser`. */
  readonly user: PlatformUser;
  /**
   * The access token, refreshed first when it is near expiry (once across processes). Rejects with
   * LoginRequiredError when the login ended meanwhile, PlatformError `ERR_PLATFORM_UNAVAILABLE`, …
   */
  token(): Promise<string>;
  /** Calls the open API with the player's token, as `req.platformFetch()`. */
  fetch(pathOrUrl: string | URL, init?: OpenApiRequestInit): Promise<Response>;
}

/** What the request's members are made of (request-members.ts): a PlayerContext, or NO_LOGIN. */
export interface RequestContext extends Omit<LoggedInPlayer, 'user'> {
  readonly loggedIn: boolean;
  readonly user: PlatformUser | undefined;
}

/** Bodies that can be sent a second time when a 401 makes platformFetch retry. */
const isReplayable = (body: RequestInit['body']): boolean =>
  body === undefined ||
  body === null ||
  typeof body === 'string' ||
  body instanceof URLSearchParams ||
  body instanceof ArrayBuffer ||
  ArrayBuffer.isView(body) ||
  body instanceof Blob ||
  body instanceof FormData;

/** The player of a record; its own copy of the scopes, since records can be shared between requests. */
function userOf(record: TokenRecord, firstRegistration: string): PlatformUser {
  const user: PlatformUser = {
    openId: record.openId,
    registration: record.registration ?? firstRegistration,
    scope: [...record.scope],
    tokenExpiresAt: record.accessExpiresAt,
  };
  if (record.unionId !== undefined) user.unionId = record.unionId;
  return user;
}

/** The context of a login; sockets and jobs use it too, so token and fetch behave alike everywhere. */
export class PlayerContext implements RequestContext {
  readonly loggedIn = true;
  /** Built on first read: a handler that never reads `req.platformUser` costs no object. */
  #user: PlatformUser | undefined;

  constructor(
    private readonly sessionId: string,
    private record: TokenRecord,
    private readonly refresher: RefreshCoordinator,
    private readonly api: ApiSettings,
    private readonly sessionTtlMs?: number,
  ) {}

  get user(): PlatformUser {
    return (this.#user ??= userOf(this.record, this.api.firstRegistration));
  }

  /** What a log of `req` shows of the context (it sits on the request, under a symbol): never the tokens. */
  [inspect.custom](): string {
    return `PlayerContext { openId: ${JSON.stringify(this.record.openId)} }`;
  }
  toJSON(): { openId: string } {
    return { openId: this.record.openId };
  }

  /** The access token, refreshed first when the request ran long and it is near expiry. */
  async token(): Promise<string> {
    // The coordinator decides whether the current token serves (fresh, refresh ahead, platform
    // trouble with a usable token) or the call waits for a refresh.
    const record = await this.refresher.forRequest(this.sessionId, this.record, this.sessionTtlMs);
    if (record !== this.record) this.renewed(record);
    return this.record.accessToken;
  }

  /** On a 401, one refresh and one retry: the platform may end a token before its stated expiry. */
  async fetch(pathOrUrl: string | URL, init: OpenApiRequestInit = {}): Promise<Response> {
    const client = this.api.client;
    const url = client.resolve(pathOrUrl, init.api);
    const token = await this.token();
    // The record whose token is sent: a socket's watch may hand this context a newer one while the
    // call is out, and a refresh asked for that newer one would repeat a refresh made elsewhere.
    const sent = this.record;
    const first = await client.send(url, init, token);
    if (first.status !== 401 || !isReplayable(init.body)) return first;
    this.renewed(await this.refresher.refresh(this.sessionId, sent, this.sessionTtlMs));
    await first.body?.cancel();
    return client.send(url, init, this.record.accessToken);
  }

  /** Takes a newer record of the same login (read by a socket's watch), so no refresh repeats one made elsewhere. */
  renewed(record: TokenRecord): void {
    if (record === this.record || record.version < this.record.version) return;
    this.record = record;
    this.#user = undefined;
  }
}

/** What a visitor on an optional route gets from a member that needs a player. */
export const loginRequired = (): LoginRequiredError =>
  new LoginRequiredError(
    'This request has no logged-in player (a visitor on an optional route): `req.platformToken()`, `req.platformFetch()` and `login.requireScopes()` need one; check `req.platformUser` first.',
  );

/** The context of a visitor on an optional route, one shared object: what needs a token rejects. */
export const NO_LOGIN: RequestContext = Object.freeze({
  loggedIn: false,
  user: undefined,
  token: (): Promise<string> => Promise.reject(loginRequired()),
  fetch: (): Promise<Response> => Promise.reject(loginRequired()),
});
