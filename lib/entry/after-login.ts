// The app's hook on every successful entry (create the player's game profile on a first entry,
// refuse a banned player), with the request, the response and the new login's token and fetch.
import type { Request, Response } from 'express';
import type { RefreshCoordinator } from '../core/refresh';
import type { AfterLogin } from './entry-redemption';
import { PlayerContext, type ApiSettings, type LoggedInPlayer } from '../http/player-context';

/** What the `afterLogin` hook is given. */
export interface AfterLoginContext {
  req: Request;
  res: Response;
  /** The new login: the player, `token()` and `fetch()` as a route has them. */
  player: LoggedInPlayer;
}

/**
 * The `afterLogin` option: resolve `false` to refuse the entry (403 `entry_refused`, no login kept);
 * anything else lets the player in. A hook that answers itself (`res.redirect('/welcome')`) replaces
 * the redirect to `successRedirect`; a hook that throws keeps no login and its error is answered.
 */
export type AfterLoginHook = (entry: AfterLoginContext) => boolean | void | Promise<boolean | void>;

/** Binds the app's hook to the package's parts, for the callback. */
export function bindAfterLogin(
  hook: AfterLoginHook,
  parts: { refresher: RefreshCoordinator; api: ApiSettings },
): AfterLogin {
  return async (req, res, sessionKey, record, ttlMs) => {
    const player = new PlayerContext(sessionKey, record, parts.refresher, parts.api, ttlMs);
    return (await hook({ req, res, player })) !== false;
  };
}
