// Defines `req.platformUser`, `req.hasPlatformLogin`, `req.platformToken()` and `req.platformFetch()`
// once, on Express's request prototype, when an app creates its login (not on import): the middleware then writes one slot per request (in
// res.locals) instead of three properties and two closures. Each accessor reads that slot.
import { IncomingMessage } from 'node:http';
import express from 'express';
import { SetupError } from '../errors';
import type { RequestContext } from './player-context';
import type { OpenApiRequestInit } from '../open-api/open-api-client';
import { reportUnhandledRequest } from './unhandled-request-report';

/*
 * Where a request's context lives: `res.locals`, under a symbol. Not a property of `req`: Express
 * gives each request its own prototype (`Object.setPrototypeOf(req, app.request)`), after which V8
 * builds a new hidden class for every property added to it, measured at 2.2–3.6 µs per request
 * for one property against 0.6 µs for `res.locals` (a dictionary object that Express creates per
 * request for exactly this: request-scoped values). A symbol stays out of templates' `for…in` and
 * of JSON; spreading or `Object.assign`-ing `res.locals` keeps it. `Symbol.for`: every copy of the
 * package in an app (two versions in node_modules) shares the slot, so each one's middleware works
 * with whichever copy's accessors were installed first.
 */
const SLOT = Symbol.for('express-platform-login.context');

/** Marks a prototype that has the accessors (a read only: computed-key reads stay cheap). */
const INSTALLED = Symbol.for('express-platform-login.accessors');

type Holder = { [SLOT]?: RequestContext };
type WithContext = Holder & { res?: { locals?: Holder }; [INSTALLED]?: true };

const notHandledMessage = (member: string): string =>
  `req.${member} was used on a request that login.middleware() did not handle: mount it in front of this route, ` +
  "e.g. `app.use('/api', login.middleware())`, or `login.middleware({ optional: true })` where visitors without a login are welcome. " +
  '(Its context lives in res.locals: a handler that assigns a new object to res.locals loses it; add to res.locals instead.)';

/** The 500 of a route without the middleware, said on the logger too (once per route). */
function notHandled(req: object, member: string): SetupError {
  const message = notHandledMessage(member);
  reportUnhandledRequest(req, member, message);
  return new SetupError(message);
}

/** The context of `req`; throws when the middleware did not run or the method was called detached. */
function contextOf(req: WithContext | undefined, member: string): RequestContext {
  if (req === undefined || req === null) {
    throw new TypeError(
      `${member} was called without its request: call it as a method, \`req.${member}\`, not as a detached function.`,
    );
  }
  const context = req.res?.locals?.[SLOT] ?? req[SLOT];
  if (context === undefined) throw notHandled(req, member);
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
      init?: OpenApiRequestInit,
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

/**
 * Gives Express's own request prototype (4 and 5 alike) the accessors, so a handler on a route the
 * middleware does not cover gets the SetupError above rather than `undefined`. Called when an app
 * creates its `platformLogin()`, never on import: importing the package changes nothing.
 */
export function installRequestAccessors(): void {
  install(express.request);
}

/** Gives `req` its context, for the accessors to read. */
export function setRequestContext(req: object, res: object, context: RequestContext): void {
  install(homeOf(req));
  const locals = (res as { locals?: unknown }).locals;
  // A request outside Express (a test double without res.locals) holds its context itself.
  if (typeof locals === 'object' && locals !== null) (locals as Holder)[SLOT] = context;
  else (req as WithContext)[SLOT] = context;
}
