// Gives a request the package's members as express-session gives it `req.session`: the middleware
// sets them on each request it handles, as the request's own properties. Nothing shared (Express's
// request prototype, another module's object) is touched, so two copies of the package, or of
// Express, never meet. Always the same four, in the same order: every request takes the same shape.
import type { Request } from 'express';
import type { RequestContext } from './player-context';

/** The members, writable here (the app sees them read-only: http/express-augment.ts). */
type Members = {
  -readonly [
    K in 'platformUser' | 'hasPlatformLogin' | 'platformToken' | 'platformFetch'
  ]: Request[K];
};

/** Sets `req.platformUser`, `req.hasPlatformLogin`, `req.platformToken()` and `req.platformFetch()`. */
export function setRequestMembers(req: Request, context: RequestContext): void {
  const members = req as Members;
  members.platformUser = context.user;
  members.hasPlatformLogin = context.loggedIn;
  // Closures, not methods reading `this`: `const { platformToken } = req` works too.
  members.platformToken = () => context.token();
  members.platformFetch = (pathOrUrl, init) => context.fetch(pathOrUrl, init);
}
