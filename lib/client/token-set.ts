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
  declare readonly accessToken: string;
  declare readonly refreshToken: string;
  declare readonly expiresIn: number;
  declare readonly expiresAt: number;
  declare readonly refreshExpiresIn?: number;
  declare readonly openId: string;
  declare readonly unionId?: string;
  declare readonly scope: string[];

  constructor({ accessToken, refreshToken, ...fields }: TokenSetFields) {
    // Non-enumerable, so object spread, Object.keys and structured logging skip the secrets.
    Object.defineProperties(this, {
      accessToken: { value: accessToken },
      refreshToken: { value: refreshToken },
    });
    Object.assign(this, fields);
  }

  /** The fields for logging, the two tokens as `[redacted]`. */
  toJSON(): TokenSetFields {
    return Object.assign({ accessToken: '[redacted]', refreshToken: '[redacted]' }, this);
  }

  toString(): string {
    return `TokenSet(openId=${this.openId}, expiresAt=${new Date(this.expiresAt).toISOString()})`;
  }

  [inspect.custom](): string {
    return `TokenSet ${inspect(this.toJSON())}`;
  }
}
