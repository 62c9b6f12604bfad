// Defines `req.platformUser`, `req.hasPlatformLogin`, `req.platformToken()` and `req.platformFetch()`
// once, on Express's request prototype: the middleware then writes one slot per request instead of
// three properties and two closures. Each accessor reads that slot (player-context.ts).
import { IncomingMessage } from 'node:http';
import express from 'express';
import { SetupError } from '../errors';
import type { RequestContext } from './player-context';

/*
 * The per-request slot is `req._platformLoginContext`, a plain named property: V8 turns an object
 * with many properties (a request, by the time it reaches a route) into a slow dictionary when a
 * property is added under a computed key such as a symbol — measured at 4–6 µs per request. One
 * name shared by every copy of the package in an app (two versions in node_modules), so each reads
 * the other's contexts through whichever accessors were installed first.
 */

/** Marks a prototype that has the accessors (a read only: computed-key reads stay cheap). */
const INSTALLED = Symbol.for('express-platform-login.accessors');

type WithContext = { _platformLoginContext?: RequestContext; [INSTALLED]?: true };

const notHandled = (member: string): SetupError =>
  new SetupError(
    `req.${member} was used on a request that login.middleware() did not handle: mount it in front of this route, ` +
      "e.g. `app.use('/api', login.middleware())`, or `login.middleware({ optional: true })` where visitors without a login are welcome.",
  );

/** The context of `req`; throws when the middleware did not run or the method was called detached. */
function contextOf(req: WithContext | undefined, member: string): RequestContext {
  if (req === undefined || req === null) {
    throw new TypeError(
      `${member} was called without its request: call it as a method, \`req.${member}\`, not as a detached function.`,
    );
  }
  const context = req._platformLoginContext;
  if (context === undefined) throw notHandled(member);
  return context;
}

const ACCESSORS: PropertyDescriptorMap = {
  platformUser: {
    configurable: true,
    get(this: WithContext) {
      return contextOf(this, 'platformUser').user;
    },
  },
  hasPlatformLogin: {
    configurable: true,
    get(this: WithContext) {
      return contextOf(this, 'hasPlatformLogin').loggedIn;
    },
  },
  platformToken: {
    configurable: true,
    writable: true,
    value: function platformToken(this: WithContext): Promise<string> {
      try {
        return contextOf(this, 'platformToken()').token();
      } catch (error) {
        return Promise.reject(error);
      }
    },
  },
  platformFetch: {
    configurable: true,
    writable: true,
    value: function platformFetch(
      this: WithContext,
      pathOrUrl: string | URL,
      init?: RequestInit,
    ): Promise<Response> {
      try {
        return contextOf(this, 'platformFetch()').fetch(pathOrUrl, init);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  },
  [INSTALLED]: { configurable: true, value: true },
};

/**
 * Where a request's accessors go: the prototype right above `http.IncomingMessage.prototype`, which
 * for Express is `express.request` — shared by every app and sub-app built on that copy of Express,
 * and by an app that gave itself its own request prototype on top of it. A request that is not an
 * IncomingMessage (a test double) gets them on itself.
 */
function homeOf(req: object): object {
  for (let proto = Object.getPrototypeOf(req) as object | null; proto !== null;) {
    const above = Object.getPrototypeOf(proto) as object | null;
    if (above === IncomingMessage.prototype) return proto;
    proto = above;
  }
  return req;
}

function install(target: object): void {
  if ((target as WithContext)[INSTALLED] === true) return;
  Object.defineProperties(target, ACCESSORS);
}

// Express's own request prototype (4 and 5 alike) gets them when the package loads, so a handler
// on a route the middleware does not cover gets the SetupError above rather than `undefined`.
install(express.request);

/** Gives `req` its context, for the accessors to read. */
export function setRequestContext(req: object, context: RequestContext): void {
  const withContext = req as WithContext;
  // One inherited read per request; the install itself happens once per prototype.
  if (withContext[INSTALLED] !== true) install(homeOf(req));
  withContext._platformLoginContext = context;
}
