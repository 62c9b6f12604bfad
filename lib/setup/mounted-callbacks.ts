// Where the app mounted each login.callback, read from the app's router at start-up, so a callback
// away from redirectUri's path is named before any player meets Express's 404. Express exposes the
// mounted layers only as its router's `stack` (`app.router` on Express 5, `app._router` on 4, where
// `app.router` throws); a layer's path is read where it is a plain string (Express 5's `rawPath`,
// Express 4's literal-path RegExp), and a path it cannot read is left to the per-request check.
import type { CallbackMountCheck } from './callback-mount-check';

/** A layer of an Express router, as far as the walk reads it. */
interface Layer {
  handle?: unknown;
  route?: unknown;
  rawPath?: unknown;
  regexp?: RegExp & { fast_slash?: boolean };
}

/** Each callback router made by platformLogin(), with its mount check. */
const checks = new WeakMap<object, CallbackMountCheck>();

/** Lets the start-up walk find `router` (a PlatformLogin's `callback`) and tell `check`. */
export function registerCallback(router: object, check: CallbackMountCheck): void {
  checks.set(router, check);
}

/** The app's router, or `undefined` before the app has any. */
function routerOf(app: object): { stack?: unknown } | undefined {
  const express4 = (app as { _router?: { stack?: unknown } })._router;
  if (express4 !== undefined) return express4;
  try {
    return (app as { router?: { stack?: unknown } }).router;
  } catch {
    return undefined; // Express 4 before its first app.use(): `app.router` throws
  }
}

/** A layer's mount path when it is a plain path (no parameter, no pattern), else `undefined`. */
function pathOf(layer: Layer): string | undefined {
  if (typeof layer.rawPath === 'string') {
    return /^[\w./~-]*$/.test(layer.rawPath) ? layer.rawPath : undefined;
  }
  const regexp = layer.regexp;
  if (regexp === undefined) return undefined;
  if (regexp.fast_slash === true) return '';
  // Express 4's path-to-regexp 0.1 writes `app.use('/a.b', …)` as /^\/a\.b\/?(?=\/|$)/i.
  const literal = /^\^((?:\\[/.]|[\w~-])*)\\\/\?\(\?=\\\/\|\$\)$/.exec(regexp.source);
  return literal ? literal[1]!.replace(/\\([/.])/g, '$1') : undefined;
}

/** Tells each registered callback found under `stack` where it is mounted (below `prefix`). */
function walk(stack: unknown, prefix: string, depth: number): void {
  if (!Array.isArray(stack) || depth > 8) return;
  for (const layer of stack as Layer[]) {
    if (typeof layer.handle !== 'function' || layer.route !== undefined) continue;
    const path = pathOf(layer);
    if (path === undefined) continue;
    const mounted = `${prefix}${path}`.replace(/\/+$/, '') || '/';
    const check = checks.get(layer.handle);
    if (check !== undefined) check.mountedAt(mounted);
    else walk((layer.handle as { stack?: unknown }).stack, mounted.replace(/\/$/, ''), depth + 1);
  }
}

/** Walks `app`'s router for the callbacks of platformLogin(); each finding is said once. */
export function checkCallbackMounts(app: object): void {
  walk(routerOf(app)?.stack, '', 0);
}
