// Ends every login of the requesting player: every registration, browser and process, joined by
// unionid where the platform gave one (core/player-join.ts). POST only, as `login.logout()`.
import type { RequestHandler } from 'express';
import { LoginRequiredError, methodNotAllowed } from '../errors';
import { requireSession } from './require-session';
import { playerKeyOf } from '../core/player-key';
import { logoutReached } from '../core/player-join';
import type { LogoutDeps } from './logout';

/** The handler: 204 once every login of the player was ended; 401 without a login. */
export function createLogoutEverywhereHandler(deps: LogoutDeps): RequestHandler {
  return async function platformLogoutEverywhere(req, res, next) {
    try {
      if (req.method !== 'POST') throw methodNotAllowed('POST');
      requireSession(req);
      const marker = req.session.platformLogin;
      if (marker === undefined) throw new LoginRequiredError();
      const sessions = await logoutReached(deps.store.records, playerKeyOf(marker));
      deps.events.emit('playerLoggedOut', { openId: marker.openId, sessions });
      res.setHeader('Cache-Control', 'no-store');
      res.status(204).end();
    } catch (error) {
      deps.fail(error, req, res, next);
    }
  };
}
