// Scopes a route needs: after `login.middleware()`, a player who did not grant one of them gets
// 403 `insufficient_scope` (a login without them is still a login: no 401, nothing ends).
import type { RequestHandler } from 'express';
import { insufficientScope, invalidOption } from '../errors';
import type { FailHandler } from './fail-handler';

/** The middleware of `login.requireScopes(...scopes)`; the scopes are checked once, here. */
export function requireScopes(scopes: readonly string[], fail: FailHandler): RequestHandler {
  if (scopes.length === 0 || scopes.some((scope) => typeof scope !== 'string' || scope === '')) {
    // A setup refusal (the route is being mounted), as every other one is.
    throw invalidOption(
      "login.requireScopes(...scopes): pass one or more scope names, e.g. login.requireScopes('user_info').",
      'scopes',
    );
  }
  const needed = [...new Set(scopes)];
  return (req, res, next) => {
    try {
      // Throws LoginRequiredError / SetupError without the middleware's login, answered as such.
      const granted = req.platformUser.scope;
      const missing = needed.filter((scope) => !granted.includes(scope));
      if (missing.length === 0) return next();
      fail(insufficientScope(missing), req, res, next);
    } catch (error) {
      fail(error, req, res, next);
    }
  };
}
