// A player entering the game: the platform issues a fresh code bound to a client and a redirect_uri
// and sends the browser to `redirect_uri?code=…`, as the platform opens a game. Used by GET /enter
// and issueCode().
import { isRedirectUri } from '../util/redirect-uri';
import type { SimulatorState } from './platform-state';

/**
 * Resolves who enters, for which client, and where to (each falling back to the simulator's
 * defaults) against the registered clients and players, or says why it cannot be made. A
 * `redirectUri` left undefined: the code will accept any.
 */
export function resolveEntry(
  state: SimulatorState,
  request: { openId?: string; clientId?: string; redirectUri?: string },
): { clientId: string; openId: string; redirectUri: string | undefined } | string {
  const { clients, players, defaultRedirectUri } = state.config;
  const client =
    request.clientId === undefined
      ? clients[0]
      : clients.find((c) => c.clientId === request.clientId);
  if (client === undefined) return 'unknown client_id';
  const player = request.openId === undefined ? players[0] : state.findPlayer(request.openId);
  if (player === undefined) return 'unknown open_id';

  const registered = client.redirectUris ?? [];
  const redirectUri = request.redirectUri ?? defaultRedirectUri ?? registered[0];
  if (redirectUri !== undefined) {
    if (!isRedirectUri(redirectUri)) {
      return 'redirect_uri must be an absolute http(s) URL without a #fragment';
    }
    if (registered.length > 0 && !registered.includes(redirectUri)) {
      return 'redirect_uri is not registered for this client';
    }
  }
  return { clientId: client.clientId, openId: player.openId, redirectUri };
}

/** `redirectUri` with `code` appended, its existing query left byte for byte as it was. */
export function entryLocation(redirectUri: string, code: string): string {
  const separator = redirectUri.includes('?') ? '&' : '?';
  return `${redirectUri}${separator}code=${encodeURIComponent(code)}`;
}
