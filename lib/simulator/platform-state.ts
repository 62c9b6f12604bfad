// The simulated platform's memory: its clock, the codes it issued and the grants (access and
// refresh token pairs) it holds. No HTTP here; token-grants.ts applies the OAuth rules to it.
import { randomBytes } from 'node:crypto';
import type { SimulatorConfig, SimulatorPlayer } from './options';

/** How many POST /token calls (by grant_type, or invalid) and GET /userinfo calls were received. */
export interface SimulatorCallCounts {
  authorization_code: number;
  refresh_token: number;
  invalid: number;
  userinfo: number;
}

/** An authorization code as the platform remembers it. */
export interface CodeRecord {
  clientId: string;
  openId: string;
  /** The redirect_uri the code was issued for; undefined: issued without one, any is accepted. */
  redirectUri: string | undefined;
  expiresAt: number;
  used: boolean;
}

/** One authorization of a player for a client: the current access token and its refresh token. */
export interface GrantRecord {
  clientId: string;
  player: SimulatorPlayer;
  redirectUri: string | undefined;
  accessToken: string;
  accessExpiresAt: number;
  refreshToken: string;
  refreshExpiresAt: number;
}

/** 32 random bytes, base64url: 43 printable ASCII characters. */
const newToken = (): string => randomBytes(32).toString('base64url');

/** Expired entries are swept once a map reaches this size, so a long-running simulator stays small. */
const SWEEP_THRESHOLD = 1024;

/** Clock, codes and grants of one simulator. */
export class SimulatorState {
  readonly calls: SimulatorCallCounts = {
    authorization_code: 0,
    refresh_token: 0,
    invalid: 0,
    userinfo: 0,
  };
  /** POST /token calls by the `client_id` they carried (`''` when none) and grant_type. */
  readonly callsByClient = new Map<string, { authorization_code: number; refresh_token: number }>();

  /** Issued codes; grants by their live refresh token (one forgotten is refused) and access token. */
  readonly codes = new Map<string, CodeRecord>();
  readonly grantsByRefreshToken = new Map<string, GrantRecord>();
  readonly grantsByAccessToken = new Map<string, GrantRecord>();
  /** Refresh tokens retired by a rotation, to count their reuse (a platform may call it theft). */
  readonly retired = new Set<string>();
  private clockOffsetMs = 0;
  private sweepAt = SWEEP_THRESHOLD;
  foreignClientRefreshes = 0;
  retiredTokenReuses = 0;

  /** The players by openId: a benchmark's simulator knows thousands. */
  readonly #players: ReadonlyMap<string, SimulatorPlayer>;

  /** `config` is this simulator's own: the setters of PlatformSimulator change it as it runs. */
  constructor(readonly config: SimulatorConfig) {
    this.#players = new Map(config.players.map((player) => [player.openId, player]));
  }

  /** Simulated epoch milliseconds: the real clock plus every advanceClock. */
  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  advanceClock(seconds: number): void {
    this.clockOffsetMs += seconds * 1000;
  }

  /** The player's open_id under `clientId`: as configured under the first client, prefixed under the others. */
  openIdFor(clientId: string, player: SimulatorPlayer): string {
    return clientId === this.config.clients[0]?.clientId
      ? player.openId
      : `${clientId}.${player.openId}`;
  }

  /** Counts a token call under the client it named. */
  countCall(clientId: string | undefined, grant: 'authorization_code' | 'refresh_token'): void {
    const key = clientId ?? '';
    const counts = this.callsByClient.get(key) ?? { authorization_code: 0, refresh_token: 0 };
    counts[grant] += 1;
    this.callsByClient.set(key, counts);
  }

  findPlayer(openId: string): SimulatorPlayer | undefined {
    return this.#players.get(openId);
  }

  issueCode(clientId: string, openId: string, redirectUri: string | undefined): string {
    this.sweepIfLarge();
    // 24 bytes: a code is short-lived and single-use, 192 bits are plenty.
    const code = randomBytes(24).toString('base64url');
    const expiresAt = this.now() + this.config.codeLifetimeSeconds * 1000;
    this.codes.set(code, { clientId, openId, redirectUri, expiresAt, used: false });
    return code;
  }

  createGrant(
    clientId: string,
    player: SimulatorPlayer,
    redirectUri: string | undefined,
  ): GrantRecord {
    this.sweepIfLarge();
    const now = this.now();
    const grant: GrantRecord = {
      clientId,
      player,
      redirectUri,
      accessToken: newToken(),
      accessExpiresAt: now + this.config.accessTokenLifetimeSeconds * 1000,
      refreshToken: newToken(),
      refreshExpiresAt: now + this.config.refreshTokenLifetimeSeconds * 1000,
    };
    this.grantsByAccessToken.set(grant.accessToken, grant);
    this.grantsByRefreshToken.set(grant.refreshToken, grant);
    return grant;
  }

  /**
   * The platform's rule: an unexpired access token keeps its value and gets a new expiry; an
   * expired one is replaced.
   */
  renewAccessToken(grant: GrantRecord): void {
    const now = this.now();
    if (now >= grant.accessExpiresAt) {
      this.grantsByAccessToken.delete(grant.accessToken);
      grant.accessToken = newToken();
      this.grantsByAccessToken.set(grant.accessToken, grant);
    }
    grant.accessExpiresAt = now + this.config.accessTokenLifetimeSeconds * 1000;
  }

  /** A new refresh token with a fresh lifetime; the old one is forgotten, so it is rejected from now on. */
  rotateRefreshToken(grant: GrantRecord): void {
    this.grantsByRefreshToken.delete(grant.refreshToken);
    if (this.retired.size >= SWEEP_THRESHOLD * 64) this.retired.clear();
    this.retired.add(grant.refreshToken);
    grant.refreshToken = newToken();
    grant.refreshExpiresAt = this.now() + this.config.refreshTokenLifetimeSeconds * 1000;
    this.grantsByRefreshToken.set(grant.refreshToken, grant);
  }

  /** Forgets refresh tokens (of one player, or all); their access tokens live until they expire. */
  revokeRefreshTokens(openId: string | undefined): void {
    for (const [token, grant] of this.grantsByRefreshToken) {
      if (openId === undefined || grant.player.openId === openId) {
        this.grantsByRefreshToken.delete(token);
      }
    }
  }

  private sweepIfLarge(): void {
    const size = this.codes.size + this.grantsByAccessToken.size + this.grantsByRefreshToken.size;
    if (size < this.sweepAt) return;
    const now = this.now();
    for (const [code, record] of this.codes) if (now >= record.expiresAt) this.codes.delete(code);
    for (const [token, grant] of this.grantsByAccessToken) {
      if (now >= grant.accessExpiresAt) this.grantsByAccessToken.delete(token);
    }
    for (const [token, grant] of this.grantsByRefreshToken) {
      if (now >= grant.refreshExpiresAt) this.grantsByRefreshToken.delete(token);
    }
    const left = this.codes.size + this.grantsByAccessToken.size + this.grantsByRefreshToken.size;
    this.sweepAt = Math.max(SWEEP_THRESHOLD, left * 2);
  }
}
