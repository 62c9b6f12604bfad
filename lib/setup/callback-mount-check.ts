// Finds a callback router mounted where redirectUri's path does not reach it: the platform sends
// every player to redirectUri, Express answers its plain 404, and nothing else would say why. A
// 404 never reaches the package, so the check looks from where it can: the first request the
// callback router sees (its mount path, req.baseUrl), each request the middleware sees until the
// callback has been reached (one at redirectUri's path means no callback caught it), and, at the
// middleware's first request, the app's own router stack. Each finding is said once.
import type { Request } from 'express';

/** Says a finding once; the message names both paths. */
export type MountWarn = (fields: Record<string, unknown>, message: string) => void;

/** What the callback router and the middleware call on their requests. */
export interface CallbackMountCheck {
  /** At the callback router, before its entry: is it mounted at redirectUri's path? */
  atCallback(req: Request): void;
  /** At login.middleware(): did a request for redirectUri's path pass by no callback? */
  atRequest(req: Request): void;
}

/** Express 4 keeps a layer's path in `regexp` only; Express 5 (router 2) in `rawPath`. */
interface Layer {
  handle?: unknown;
  rawPath?: unknown;
  regexp?: unknown;
  match?: (path: string) => boolean;
}

/** A layer's mount path when it is a plain one: Express 5's `rawPath`, or read back from Express 4's regexp. */
function mountPathOf(layer: Layer): string | undefined {
  if (typeof layer.rawPath === 'string') return layer.rawPath;
  if (!(layer.regexp instanceof RegExp)) return undefined;
  // Express 4 (path-to-regexp 0.1) mounts `/a/b` as /^\/a\/b\/?(?=\/|$)/i.
  const plain = /^\^((?:\\\/[\w.~-]+)+)\\\/\?\(\?=\\\/\|\$\)$/.exec(layer.regexp.source);
  return plain === null ? undefined : plain[1]!.replace(/\\\//g, '/');
}

/** A path without its trailing slash (Express matches `/a` and `/a/` alike), `/` for the root. */
const normal = (path: string): string => path.replace(/\/+$/, '') || '/';

const pathOf = (url: string): string => {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
};

/** The layers of `app`'s router and of the routers under it that hold `router`. */
function layersHolding(app: unknown, router: unknown): Layer[] {
  const base = app as { router?: { stack?: unknown }; _router?: { stack?: unknown } } | undefined;
  const found: Layer[] = [];
  const visit = (stack: unknown, depth: number): void => {
    if (!Array.isArray(stack) || depth > 4) return;
    for (const layer of stack as Layer[]) {
      if (layer.handle === router) found.push(layer);
      else visit((layer.handle as { stack?: unknown } | undefined)?.stack, depth + 1);
    }
  };
  // Express 4 has `app._router` (and an `app.router` getter that throws); Express 5 `app.router`.
  // A check must never fail the request it looks at: an app unlike these is simply not looked at.
  try {
    visit((base?._router ?? base?.router)?.stack, 0);
  } catch {
    return [];
  }
  return found;
}

/**
 * The check of one PlatformLogin. `router`: the callback router as the app mounts it;
 * `redirectUri`: the address the platform sends players to.
 */
export function createCallbackMountCheck(
  redirectUri: string,
  router: unknown,
  warn: MountWarn,
): CallbackMountCheck {
  const expected = normal(new URL(redirectUri).pathname);
  let reached = false;
  let warned = false;
  let lookedAtApp = false;
  const say = (fields: Record<string, unknown>, message: string): void => {
    if (warned) return;
    warned = true;
    warn({ event: 'setupProblem', redirectPath: expected, ...fields }, message);
  };
  return {
    atCallback(req) {
      if (reached) return;
      reached = true;
      const mounted = normal(req.baseUrl ?? '');
      if (mounted !== expected) {
        say(
          { mountPath: mounted },
          `login.callback is mounted at ${mounted}, but redirectUri's path is ${expected}: the platform sends players to ${expected}, ` +
            `which answers 404. Mount it there — app.use('${expected}', login.callback) — or change redirectUri (and the platform's registration).`,
        );
      }
    },
    atRequest(req) {
      if (reached || warned) return;
      if (!lookedAtApp) {
        lookedAtApp = true;
        const layers = layersHolding(req.app, router);
        const reaches = layers.some((layer) => layer.match?.call(layer, expected) !== false);
        if (layers.length > 0 && !reaches) {
          const paths = layers.map(mountPathOf).filter((p) => p !== undefined);
          const where = paths.length > 0 ? `at ${paths.join(', ')}` : 'elsewhere';
          say(
            { mountPath: paths[0] },
            `login.callback is mounted ${where}, but redirectUri's path is ${expected}: the platform sends players to ${expected}, ` +
              `which answers 404. Mount it there — app.use('${expected}', login.callback) — or change redirectUri (and the platform's registration).`,
          );
          return;
        }
      }
      if (normal(pathOf(req.originalUrl ?? req.url ?? '')) === expected) {
        say(
          {},
          `A request for redirectUri's path ${expected} reached login.middleware() without passing login.callback: ` +
            `mount app.use('${expected}', login.callback) before the middleware.`,
        );
      }
    },
  };
}
