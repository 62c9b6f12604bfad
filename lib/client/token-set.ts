// The validated result of a token request. The tokens are real properties (the caller needs them),
// but every way a value usually reaches a log — util.inspect, JSON.stringify, String() — hides them.
import { inspect } from 'node:util';

/** Fields of a validated token response. */
export interface TokenSetFields {
  /** Credential for the open APIs. */
  accessToken: string;
  /** Long-lived credential used only to refresh `accessToken`. */
  refreshToken: string;
  /** Validity of the access token in seconds, as the platform returned it. */
  expiresIn: number;
  /** When the access token expires, in epoch milliseconds, counted from when the request was sent. */
  expiresAt: number;
  /** The refresh token's remaining life in seconds, when the platform stated it (`refresh_expires_in`). */
  refreshExpiresIn?: number;
  /** Identifier of the player within this application. */
  openId: string;
  /** Additional user identifier, when the platform sent one. */
  unionId?: string;
  /** Granted scopes: split on commas, trimmed, de-duplicated. */
  scope: string[];
}

/** A validated token response whose tokens never show in logs. */
export class TokenSet implements TokenSetFields {
  readonly accessToken!: string;
  readonly refreshToken!: string;
  readonly expiresIn: number;
  readonly expiresAt: number;
  declare readonly refreshExpiresIn?: number;
  readonly openId: string;
  readonly unionId?: string;
  readonly scope: string[];

  constructor(fields: TokenSetFields) {
    // Non-enumerable, so object spread, Object.keys and structured logging skip the secrets.
    Object.defineProperty(this, 'accessToken', { value: fields.accessToken, enumerable: false });
    Object.defineProperty(this, 'refreshToken', { value: fields.refreshToken, enumerable: false });
    this.expiresIn = fields.expiresIn;
    this.expiresAt = fields.expiresAt;
    if (fields.refreshExpiresIn !== undefined) this.refreshExpiresIn = fields.refreshExpiresIn;
    this.openId = fields.openId;
    if (fields.unionId !== undefined) this.unionId = fields.unionId;
    this.scope = fields.scope;
  }

  /** The non-secret fields, for logging. */
  toJSON(): Omit<TokenSetFields, 'accessToken' | 'refreshToken'> & {
    accessToken: string;
    refreshToken: string;
  } {
    return {
      accessToken: '[redacted]',
      refreshToken: '[redacted]',
      expiresIn: this.expiresIn,
      expiresAt: this.expiresAt,
      ...(this.refreshExpiresIn === undefined ? {} : { refreshExpiresIn: this.refreshExpiresIn }),
      openId: this.openId,
      ...(this.unionId === undefined ? {} : { unionId: this.unionId }),
      scope: this.scope,
    };
  }

  toString(): string {
    return `TokenSet(openId=${this.openId}, expiresAt=${new Date(this.expiresAt).toISOString()})`;
  }

  [inspect.custom](): string {
    return `TokenSet ${inspect(this.toJSON())}`;
  }
}
