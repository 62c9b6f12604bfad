// A player's login for work with no request (a match's end, a scheduled reward): found through the
// store's player index — in every registration, joined by unionid (core/player-join.ts) — with the
// token and the open-API fetch of a route, refreshed under the same lock as the player's requests
// and sockets.
import { LoginRequiredError } from '../errors';
import type { RefreshCoordinator } from '../core/refresh';
import type { TokenRecords } from '../core/store-engine';
import { reachPlayer } from '../core/player-join';
import { PlayerContext, type ApiSettings, type LoggedInPlayer } from '../http/player-context';

/** What the jobs work with (one set per PlatformLogin). */
export interface JobsDeps {
  records: TokenRecords;
  refresher: RefreshCoordinator;
  api: ApiSettings;
}

/**
 * The player's freshest live login — the one whose record lives longest (the latest entry or the
 * most recently active session) — or LoginRequiredError when the player has none. `playerKey`:
 * the index key the player is reached from (registrations/player-ref.ts). Rejects with
 * StoreUnavailableError when the store fails.
 */
export async function loginOfPlayer(deps: JobsDeps, playerKey: string): Promise<LoggedInPlayer> {
  const { records, refresher, api } = deps;
  for (const { sessionKey, expiresAt } of (await reachPlayer(records, playerKey)).logins) {
    const read = await records.get(sessionKey);
    // Gone since the index was read (or unreadable by this process): try the next freshest.
    if (read.status !== 'found') continue;
    // A refresh keeps the record's store lifetime as it is: a job must not extend a session's.
    const ttlMs = Math.max(1000, expiresAt - Date.now());
    return new PlayerContext(sessionKey, read.record, refresher, api, ttlMs);
  }
  throw new LoginRequiredError(
    'The player has no live login (never entered, logged out, or the login expired): they must enter the game from the platform.',
  );
}
