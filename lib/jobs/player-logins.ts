// A player's login for work with no request (a match's end, a scheduled reward): found by openId
// through the store's player index, with the token and the open-API fetch of a route, refreshed
// under the same lock as the player's requests and sockets.
import { LoginRequiredError } from '../errors';
import type { RefreshCoordinator } from '../core/refresh';
import { PlayerContext, type ApiSettings, type LoggedInPlayer } from '../http/player-context';
import type { LoginAccess } from '../sockets/store-access';

export type { LoggedInPlayer };

/** What the jobs work with (one set per PlatformLogin). */
export interface JobsDeps {
  access: LoginAccess;
  refresher: RefreshCoordinator;
  api: ApiSettings;
}

/**
 * The player's freshest live login — the one whose record lives longest (the latest entry or the
 * most recently active session) — or LoginRequiredError when the player has none. Rejects with
 * StoreUnavailableError when the store fails.
 */
export async function loginOfPlayer(deps: JobsDeps, openId: string): Promise<LoggedInPlayer> {
  const { access, refresher, api } = deps;
  if (typeof openId !== 'string' || openId === '') {
    throw new TypeError("login.forPlayer(openId): pass the player's openId, a non-empty string.");
  }
  for (const { sessionKey, expiresAt } of await access.loginsOf(openId)) {
    const state = await access.read(sessionKey);
    // Gone since the index was read, or another player's (never): try the next freshest.
    if (state.status !== 'live' || state.record.openId !== openId) continue;
    // A refresh keeps the record's store lifetime as it is: a job must not extend a session's.
    const ttlMs = Math.max(1000, expiresAt - Date.now());
    return new PlayerContext(sessionKey, state.record, refresher, api, ttlMs);
  }
  throw new LoginRequiredError(
    'The player has no live login (never entered, logged out, or the login expired): they must enter the game from the platform.',
  );
}
