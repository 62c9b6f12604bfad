// What a route handler gets from the middleware for one request: the player, a fresh token on
// demand, and a fetch to the open API that carries the token. One small object per request; its
// methods live on the class, not in per-request closures.
import type { Request } from 'express';
import type { RefreshCoordinator } from '../core/refresh';
import type { TokenRecord } from '../core/token-record';
import { inspect } from 'node:util';
import { LoginRequiredError } from '../errors';

/** The logged-in player, as `req.platformUser`. */
export interface PlatformUser {
  /** Identifier of the player within this application. */
  openId: string;
  /** Additional identifier, when the platform sent one. */
  unionId?: string;
  /** Scopes the player granted. */
  scope: string[];
  /** When the current access token expires, epoch milliseconds (not a secret; for display and logs). */
  tokenExpiresAt: number;
}

/** How platformFetch reaches the open API, computed once from the options. */
export interface ApiSettings {
  /** `apiUrl` without a trailing slash. */
  apiBase: string;
  /** `new URL(apiBase)`: absolute URLs must stay under it. */
  apiUrl: URL;
  accessTokenPlacement: 'header' | 'query';
  accessTokenQueryParameter: string;
  /** Session lifetime (`sessionMaxAgeSeconds`) when the session cookie has no `maxAge`. */
  sessionTtlMs: number;
}

/** The session's lifetime: the cookie's `maxAge` when it has one (the session store uses it), else the option. */
export function sessionTtlMsOf(session: Request['session'], fallbackMs: number): number {
  const maxAge = session.cookie?.originalMaxAge;
  return typeof maxAge === 'number' && maxAge > 0 ? maxAge : fallbackMs;
}

/**
 * What `req.platformUser`, `req.hasPlatformLogin`, `req.platformToken()` and `req.platformFetch()`
 * read (request-accessors.ts). A logged-in request has a {@link PlayerContext}; a request without a
 * login on an optional route has {@link NO_LOGIN}.
 */
export interface RequestContext {
  readonly loggedIn: boolean;
  readonly user: PlatformUser;
  token(): Promise<string>;
  fetch(pathOrUrl: string | URL, init?: RequestInit): Promise<Response>;
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
function userOf(record: TokenRecord): PlatformUser {
  const user: PlatformUser = {
    openId: record.openId,
    scope: [...record.scope],
    tokenExpiresAt: record.accessExpiresAt,
  };
  if (record.unionId !== undefined) user.unionId = record.unionId;
  return user;
}

/** True when `path` is `base` or below it, by whole segments: `/v1` admits `/v1/x`, not `/v1evil`. */
const isUnderPath = (path: string, base: string): boolean =>
  base.endsWith('/') ? path.startsWith(base) : path === base || path.startsWith(`${base}/`);

/** The context of a request with a login. */
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
    return (this.#user ??= userOf(this.record));
  }

  /** What a log of `req` shows of the context (it sits on the request): never the tokens. */
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

  /**
   * Calls the open API with the player's token. A 401 forces one refresh and one retry, because the
   * platform may have ended the token before its stated expiry.
   */
  async fetch(pathOrUrl: string | URL, init: RequestInit = {}): Promise<Response> {
    const url = this.resolve(pathOrUrl);
    const first = await this.send(url, init, await this.token());
    if (first.status !== 401 || !isReplayable(init.body)) return first;
    this.renewed(await this.refresher.refresh(this.sessionId, this.record, this.sessionTtlMs));
    await first.body?.cancel();
    return this.send(url, init, this.record.accessToken);
  }

  private renewed(record: TokenRecord): void {
    this.record = record;
    this.#user = undefined;
  }

  private resolve(pathOrUrl: string | URL): URL {
    const url =
      typeof pathOrUrl === 'string' && pathOrUrl.startsWith('/') && !pathOrUrl.startsWith('//')
        ? new URL(this.api.apiBase + pathOrUrl)
        : new URL(pathOrUrl);
    // The token goes to the open API only, never to whatever URL a handler happens to pass.
    if (
      url.origin !== this.api.apiUrl.origin ||
      !isUnderPath(url.pathname, this.api.apiUrl.pathname)
    ) {
      throw new TypeError(
        'platformFetch() only calls the open API under `apiUrl`; pass a path such as "/userinfo".',
      );
    }
    return url;
  }

  private send(url: URL, init: RequestInit, accessToken: string): Promise<Response> {
    if (this.api.accessTokenPlacement === 'query') {
      const withToken = new URL(url);
      withToken.searchParams.set(this.api.accessTokenQueryParameter, accessToken);
      return fetch(withToken, { ...init, redirect: 'manual' });
    }
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${accessToken}`);
    // Not following redirects keeps the Authorization header from travelling to another host.
    return fetch(url, { ...init, headers, redirect: 'manual' });
  }
}

const loginRequired = (): LoginRequiredError =>
  new LoginRequiredError(
    'This request has no logged-in player (an optional route): check `req.hasPlatformLogin` before using `req.platformUser`, `platformToken()` or `platformFetch()`.',
  );

/** The context of a request without a login on an optional route: one shared object. */
export const NO_LOGIN: RequestContext = Object.freeze({
  loggedIn: false,
  get user(): PlatformUser {
    throw loginRequired();
  },
  token: (): Promise<string> => Promise.reject(loginRequired()),
  fetch: (): Promise<Response> => Promise.reject(loginRequired()),
});
