// Finds a callback router mounted where redirectUri's path does not reach it (Express's plain 404
// would never say why), from the requests the package sees and at start-up (docs/operations.md).
// Each finding is said once.
import type { Request } from 'express';

/** What the callback router and the middleware call on their requests. */
export type CallbackMountCheck = ReturnType<typeof createCallbackMountCheck>;

/** A path without its trailing slash (Express matches `/a` and `/a/` alike), `/` for the root. */
const normal = (path: string): string => path.replace(/\/+$/, '') || '/';

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The check of one callback router; `redirectUri`: where the platform sends players through it. */
export function createCallbackMountCheck(
  redirectUri: string,
  warn: (fields: Record<string, unknown>, message: string) => void,
) {
  const expected = normal(new URL(redirectUri).pathname);
  // A URL at that path, as Express matches it (any case, trailing slashes, a query): one test per
  // request, no allocation, since a process that never serves the callback checks every request.
  const atRedirectPath = new RegExp(
    `^${escapeRegExp(expected.replace(/\/$/, ''))}/*(?:[?#]|$)`,
    'i',
  );
  let reached = false;
  let warned = false;
  const say = (fields: Record<string, unknown>, message: string): void => {
    if (warned) return;
    warned = true;
    warn({ event: 'setupProblem', redirectPath: expected, ...fields }, message);
  };
  const mountedAway = (mounted: string): void =>
    say(
      { mountPath: mounted },
      `login.callback is mounted at ${mounted}, but redirectUri's path is ${expected}: the platform sends players to ${expected}, ` +
        `which answers 404. Mount it there — app.use('${expected}', login.callback) — or change redirectUri (and the platform's registration).`,
    );
  // `app.get(path, login.callback)`: the router then sees the whole path, which its entry (at its
  // own root) never matches, so every entry is a 404 wherever the path is.
  const routed = (path: string): void =>
    say(
      { routePath: path },
      `login.callback is routed with app.get('${path}', …) (or another route method): a router routed that way never reaches its entry, ` +
        `so every entry answers 404. Mount it with app.use('${expected}', login.callback).`,
    );
  return {
    /** At the callback router, before its entry: is it mounted at redirectUri's path? */
    atCallback(req: Request): void {
      if (reached) return;
      reached = true;
      const route = (req as { route?: { path?: unknown } }).route;
      if (route !== undefined) return routed(String(route.path));
      const mounted = normal(req.baseUrl ?? '');
      if (mounted !== expected) mountedAway(mounted);
    },
    /** At start-up: the app mounted the callback router at `path`. */
    mountedAt(path: string): void {
      const mounted = normal(path);
      if (mounted !== expected) mountedAway(mounted);
    },
    /** At start-up: the app gave the callback router to a route at `path`. */
    routedAt: routed,
    /** At login.middleware(): did a request for redirectUri's path pass by no callback? */
    atRequest(req: Request): void {
      if (reached || warned) return;
      if (atRedirectPath.test(req.originalUrl ?? req.url ?? '')) {
        say(
          {},
          `A request for redirectUri's path ${expected} reached login.middleware() without passing login.callback: ` +
            `mount app.use('${expected}', login.callback) before the middleware.`,
        );
      }
    },
  };
}
