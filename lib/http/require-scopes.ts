// Scopes a route needs: after `login.middleware()`, a player who did not grant one of them gets
// 403 `insufficient_scope` (a login without them is still a login: no 401, nothing ends).
import type { RequestHandler } from 'express';
import { insufficientScope, invalidOption, SetupError } from '../errors';
import type { FailHandler } from './fail-handler';
import { loginRequired } from './player-context';

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
      // Without the middleware in front there is nothing to check: a mount mistake, said loudly.
      if ((req as { hasPlatformLogin?: boolean }).hasPlatformLogin === undefined)
        throw new SetupError(
          "login.requireScopes() runs after login.middleware(): mount it behind it, e.g. `app.get('/api/pay', login.middleware(), login.requireScopes('payments'), handler)`.",
        );
      // A visitor on an optional route has no scopes: a login is what the route needs first (401).
      const player = req.platformUser;
      if (player === undefined) throw loginRequired();
      const missing = needed.filter((scope) => !player.scope.includes(scope));
      if (missing.length === 0) return next();
      fail(insufficientScope(missing), req, res, next);
    } catch (error) {
      fail(error, req, res, next);
    }
  };
}
