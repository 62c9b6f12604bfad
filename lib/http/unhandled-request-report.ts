// Says once per route, on a logger, that a handler read `req.platformToken()` (or another accessor)
// where login.middleware() did not run: the request is answered 500 `server_misconfigured`, and
// without this line an app whose error handler logs nothing would never learn why.
import type { Request } from 'express';
import { defaultLogger, type PlatformLogger } from '../observability/logger';

/**
 * The logger of the last platformLogin() created: the accessors live on Express's request prototype,
 * shared by every PlatformLogin of the process, so they cannot know which one the app meant.
 */
let reportTo: PlatformLogger | undefined;
/** Routes already reported; bounded, as a route's path may come from the request (no route matched). */
const reported = new Set<string>();
const MAX_ROUTES = 100;

/** Sends the accessors' setup message to `logger` from now on. */
export function reportUnhandledRequestsTo(logger: PlatformLogger): void {
  reportTo = logger;
}

/** The route a request matched (its pattern, not the path with ids), or its path. */
function routeOf(req: Partial<Pick<Request, 'method' | 'baseUrl' | 'route' | 'path'>>): string {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  const path = typeof pattern === 'string' ? pattern : (req.path ?? '');
  return `${req.method ?? ''} ${req.baseUrl ?? ''}${path}`.trim();
}

/** Warns once per route that `member` was read where login.middleware() did not run. */
export function reportUnhandledRequest(req: object, member: string, message: string): void {
  const route = routeOf(req as Partial<Request>);
  if (reported.has(route) || reported.size >= MAX_ROUTES) return;
  reported.add(route);
  (reportTo ??= defaultLogger()).warn(
    { event: 'setupProblem', route, member },
    `${route}: ${message}`,
  );
}
