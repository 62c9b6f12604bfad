// The demo client and players the simulator knows when it is started without its own: the pair the
// example app and the CLI use out of the box.

/** A player the simulator can log in. */
export interface SimulatorPlayer {
  /** The player's identifier within the application (`open_id`). */
  openId: string;
  /** The platform-wide identifier (`unionid`), sent when `includeUnionId` is on. */
  unionId?: string;
  /** Display name, shown in the lobby and returned by `/userinfo`. */
  nickname: string;
  /** Scopes granted by the player, sent comma-separated in `scope`. */
  scope: string[];
}

/** An application registered with the simulated platform. */
export interface SimulatorClient {
  clientId: string;
  clientSecret: string;
  /** Registered callback addresses; undefined or empty: any http(s) `redirect_uri` is accepted when a code is issued. */
  redirectUris?: string[];
}

/** `client_id` of the demo application the simulator registers by default. */
export const DEMO_CLIENT_ID = 'demo-game';

/** `client_secret` of the demo application; public on purpose, never use it outside development. */
export const DEMO_CLIENT_SECRET = 'demo-secret';

const DEMO_SCOPE = ['user_info', 'basic_actions'];

/** The three demo players listed in the lobby by default. */
export const DEMO_PLAYERS: readonly SimulatorPlayer[] = Object.freeze([
  { openId: 'player-ada', unionId: 'union-ada', nickname: 'Ada', scope: [...DEMO_SCOPE] },
  { openId: 'player-bo', unionId: 'union-bo', nickname: 'Bo', scope: [...DEMO_SCOPE] },
  { openId: 'player-cy', unionId: 'union-cy', nickname: 'Cy', scope: [...DEMO_SCOPE] },
]);
