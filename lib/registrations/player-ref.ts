// How the app names a player to `logoutPlayer`, `sessionsOf` and `forPlayer`: an openId of the
// first registration (as before several registrations), `{ unionId }`, or `{ openId, registration }`.
// Each names an index key the player's logins are reached from (core/player-join.ts).
import { playerKeyOf, unionKeyOf } from '../core/player-key';
import type { Registration } from './registration-options';

/** A player, as the app names one. */
export type PlayerRef = string | { unionId: string } | { openId: string; registration?: string };

const nonEmpty = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** The index key `player` names; a TypeError naming `method` for anything else. */
export function playerKeyOfRef(
  player: PlayerRef,
  registrations: readonly Registration[],
  method: string,
): string {
  if (nonEmpty(player)) return player;
  const ref = player as { unionId?: unknown; openId?: unknown; registration?: unknown } | null;
  if (ref !== null && typeof ref === 'object') {
    if (nonEmpty(ref.unionId) && ref.openId === undefined) return unionKeyOf(ref.unionId);
    if (nonEmpty(ref.openId) && ref.unionId === undefined) {
      const name = ref.registration ?? registrations[0]!.name;
      const registration = registrations.find((candidate) => candidate.name === name);
      if (registration !== undefined)
        return playerKeyOf({ openId: ref.openId, registration: registration.stored });
    }
  }
  throw new TypeError(
    `login.${method}(player): pass an openId, { unionId } or { openId, registration } with a configured registration's name.`,
  );
}
