// The simulator's options: one strict schema, parsed once by startSimulator. Defaults follow the
// platform spec (7200 s `expires_in`, 90-day refresh tokens) and the demo client and players, the
// pair the example app and the CLI use out of the box.
import { z } from 'zod';
import type { OptionsSchema } from '../util/parse-options';
import { isRedirectUri } from '../util/redirect-uri';
import { SIMULATOR_ANSWER_STYLES } from './answer-style';

const redirectUri = z.string().refine(isRedirectUri, {
  error: 'must be an absolute http(s) URL without a #fragment',
});

const seconds = (what: string) =>
  z
    .number({ error: `must be a whole number of seconds, at least 1 (${what})` })
    .int()
    .min(1)
    .max(10 * 365 * 24 * 3600);

const nonEmpty = z.string({ error: 'must be a non-empty string' }).min(1);

const playerSchema = z.strictObject({
  /** The player's identifier within the application (`open_id`). */
  openId: nonEmpty,
  /** The platform-wide identifier (`unionid`), sent when `includeUnionId` is on. */
  unionId: nonEmpty.optional(),
  /** Display name, shown in the lobby and returned by `/userinfo`. */
  nickname: nonEmpty,
  /** Scopes granted by the player, sent comma-separated in `scope`. */
  scope: z.array(nonEmpty, { error: 'must be an array of scope names' }),
});

/** A player the simulator can log in. */
export type SimulatorPlayer = z.output<typeof playerSchema>;

const clientSchema = z.strictObject({
  clientId: nonEmpty,
  clientSecret: nonEmpty,
  /** Registered callback addresses; undefined or empty: any http(s) `redirect_uri` is accepted when a code is issued. */
  redirectUris: z.array(redirectUri).optional(),
});

/** An application registered with the simulated platform. */
export type SimulatorClient = z.output<typeof clientSchema>;

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

const simulatorShape = {
  /** TCP port to listen on; 0 picks a free one. Defaults to 0. */
  port: z
    .number({ error: 'must be a whole number from 0 to 65535 (0 picks a free port)' })
    .int()
    .min(0)
    .max(65535)
    .default(0),
  /** Address to listen on. Defaults to '127.0.0.1'. */
  host: nonEmpty.default('127.0.0.1'),
  /**
   * Registered applications. Defaults to the demo client (`demo-game` / `demo-secret`), any
   * redirect_uri. A player has the `openId` given for them under the first client and
   * `<clientId>.<openId>` under each other one (a platform's open_id is per application); their
   * `unionId` is the same under all.
   */
  clients: z
    .array(clientSchema)
    .min(1, { error: 'must list at least one client' })
    .refine((list) => new Set(list.map((c) => c.clientId)).size === list.length, {
      error: 'must not repeat a clientId',
    })
    .default(() => [{ clientId: DEMO_CLIENT_ID, clientSecret: DEMO_CLIENT_SECRET }]),
  /** Players shown in the lobby; `open_id`s must be unique. Defaults to DEMO_PLAYERS. */
  players: z
    .array(playerSchema)
    .min(1, { error: 'must list at least one player' })
    .refine((list) => new Set(list.map((p) => p.openId)).size === list.length, {
      error: 'must not repeat an openId',
    })
    .default(() => DEMO_PLAYERS.map((player) => ({ ...player, scope: [...player.scope] }))),
  /** Access token lifetime, sent as `expires_in`. Defaults to 7200 (the platform's sample value). */
  accessTokenLifetimeSeconds: seconds('the expires_in sent').default(7200),
  /** Refresh token lifetime. Defaults to 90 days (7 776 000 s), as the platform documents. */
  refreshTokenLifetimeSeconds: seconds('90 days by default').default(90 * 24 * 3600),
  /** How long an authorization code can be exchanged. Defaults to 300. */
  codeLifetimeSeconds: seconds('300 by default').default(300),
  /** A new refresh token on every refresh, the old one rejected from then on. Defaults to false (the same one is returned). */
  rotateRefreshTokens: z.boolean({ error: 'must be true or false' }).default(false),
  /** Where the lobby sends the browser when its URL has no `?redirect_uri=`. Defaults to the client's first registered one. */
  defaultRedirectUri: redirectUri.optional(),
  /** Send `unionid` in token and `/userinfo` responses (for players that have one). Defaults to true. */
  includeUnionId: z.boolean({ error: 'must be true or false' }).default(true),
  /**
   * Withhold `unionid` from code exchanges and send it only in refresh answers, as a platform does
   * for a player bound to the studio's account after entering. Defaults to false.
   */
  unionIdOnRefreshOnly: z.boolean({ error: 'must be true or false' }).default(false),
  /**
   * How POST /token answers: `'oauth'` (RFC 6749 errors), `'errcode'` (HTTP 200 with
   * `{ errcode, errmsg }` on failure) or `'envelope'` (everything inside `data`, numbers as strings,
   * `refresh_expires_in`, failures as `data.error_code`). Defaults to `'oauth'`.
   */
  answerStyle: z
    .enum(SIMULATOR_ANSWER_STYLES, { error: "must be 'oauth', 'errcode' or 'envelope'" })
    .default('oauth'),
};

/** The schema of startSimulator's options; parsed once, a mistake is a SetupError (`ERR_PLATFORM_INVALID_OPTION`) naming it. */
export const optionsSchema: OptionsSchema<typeof simulatorShape> = z
  .strictObject(simulatorShape)
  // The lobby enters the game for the first client, so its fallback must be an address it accepts.
  .refine(
    ({ clients, defaultRedirectUri: uri }) => {
      const registered = clients[0]?.redirectUris ?? [];
      return uri === undefined || registered.length === 0 || registered.includes(uri);
    },
    {
      path: ['defaultRedirectUri'],
      error: 'must be one of the redirectUris registered for the first client',
    },
  );

/** The simulator's configuration after parsing: every default filled in. */
export type SimulatorConfig = z.output<typeof optionsSchema>;

/** Options of startSimulator; every one is optional. */
export type SimulatorOptions = z.input<typeof optionsSchema>;
