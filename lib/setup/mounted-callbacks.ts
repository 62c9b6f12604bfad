// Where the app mounted each login.callback, read from Express 5's `app.router` at start-up; on
// Express 4, or a mount path that is not a plain string, the per-request check names it
// (callback-mount-check.ts, docs/operations.md).
import type { CallbackMountCheck } from './callback-mount-check';

/** A layer of an Express 5 router, as far as the walk reads it. */
interface Layer {
  handle?: unknown;
  route?: { path?: unknown; stack?: unknown };
  rawPath?: unknown;
}

/** Where a callback router made by platformLogin() carries its mount check. */
const MOUNT_CHECK = Symbol('express-platform-login.mount-check');

/** Lets the start-up walk find `router` (a PlatformLogin's `callback`) and tell `check`. */
export function registerCallback(router: object, check: CallbackMountCheck): void {
  Object.defineProperty(router, MOUNT_CHECK, { value: check });
}

/** The mount check a callback router made by platformLogin() carries. */
const checkOf = (handle: unknown): CallbackMountCheck | undefined =>
  (handle as { [MOUNT_CHECK]?: CallbackMountCheck } | undefined)?.[MOUNT_CHECK];

/** The app's router on Express 5; `undefined` on Express 4, whose `app.router` throws. */
function routerOf(app: object): { stack?: unknown } | undefined {
  try {
    return (app as { router?: { stack?: unknown } }).router;
  } catch {
    return undefined;
  }
}

/** Tells each registered callback found under `stack` where it is mounted (below `prefix`). */
function walk(stack: unknown, prefix: string, depth: number): void {
  if (!Array.isArray(stack) || depth > 8) return;
  for (const layer of stack as Layer[]) {
    const { route } = layer;
    if (route !== undefined) {
      // `app.get(path, login.callback)`: said as such, whatever the path.
      const handlers = Array.isArray(route.stack) ? (route.stack as Layer[]) : [];
      for (const handler of handlers)
        checkOf(handler.handle)?.routedAt(`${prefix}${String(route.path)}`);
      continue;
    }
    if (typeof layer.handle !== 'function') continue;
    // A plain mount path only: no parameter, no pattern.
    if (typeof layer.rawPath !== 'string' || !/^[\w./~-]*$/.test(layer.rawPath)) continue;
    const mounted = `${prefix}${layer.rawPath}`.replace(/\/+$/, '') || '/';
    const check = checkOf(layer.handle);
    if (check !== undefined) check.mountedAt(mounted);
    else walk((layer.handle as { stack?: unknown }).stack, mounted.replace(/\/$/, ''), depth + 1);
  }
}

/** Walks `app`'s router (Express 5) for the callbacks of platformLogin(); each finding is said once. */
export function checkCallbackMounts(app: object): void {
  walk(routerOf(app)?.stack, '', 0);
}
