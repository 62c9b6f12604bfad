// Gives a request the package's members as express-session gives it `req.session`: the middleware
// sets them on each request it handles, as the request's own properties. Nothing shared (Express's
// request prototype, another module's object) is touched, so two copies of the package, or of
// Express, never meet. Always the same five, in the same order: every request takes the same shape.
import type { Request } from 'express';
import type { RequestContext } from './player-context';
import type { OpenApiRequestInit } from '../open-api/open-api-client';

/** The request's context, under a symbol: out of `for…in`, JSON and templates. */
const CONTEXT = Symbol('express-platform-login.context');

/** The members, writable here (the app sees them read-only: http/express-augment.ts). */
type Members = {
  -readonly [
    K in 'platformUser' | 'hasPlatformLogin' | 'platformToken' | 'platformFetch'
  ]: Request[K];
} & { [CONTEXT]?: RequestContext };

/** Calls `use` on the context of the request a method was called on; a detached call has none. */
function withContext<T>(
  req: Members | undefined,
  member: string,
  use: (context: RequestContext) => Promise<T>,
): Promise<T> {
  const context = req?.[CONTEXT];
  if (context !== undefined) return use(context);
  return Promise.reject(
    new TypeError(
      `${member} was called without its request: call it as a method, \`req.${member}\`, not as a detached function.`,
    ),
  );
}

// Shared methods reading `this`, as Express's own `req.get()`: no closure made per request.
function platformToken(this: Members | undefined): Promise<string> {
  return withContext(this, 'platformToken()', (context) => context.token());
}

function platformFetch(
  this: Members | undefined,
  pathOrUrl: string | URL,
  init?: OpenApiRequestInit,
): Promise<Response> {
  return withContext(this, 'platformFetch()', (context) => context.fetch(pathOrUrl, init));
}

/** Sets `req.platformUser`, `req.hasPlatformLogin`, `req.platformToken()` and `req.platformFetch()`. */
export function setRequestMembers(req: Request, context: RequestContext): void {
  const members = req as Members;
  members[CONTEXT] = context;
  members.platformUser = context.user;
  members.hasPlatformLogin = context.loggedIn;
  members.platformToken = platformToken;
  members.platformFetch = platformFetch;
}
