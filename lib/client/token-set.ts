// The validated result of a token request. The tokens are real properties (the caller needs them),
// but every way a value usually reaches a log — util.inspect, JSON.stringify, String() — hides them.
import { inspect } from 'node:util';

/** A validated token response whose tokens never show in logs. */
export class TokenSet {
  /** Credential for the open APIs. */
  declare readonly accessToken: string;
  /** Long-lived credential used only to refresh `accessToken`. */
  declare readonly refreshToken: string;
  /** Validity of the access token in seconds, as the platform returned it. */
  declare readonly expiresIn: number;
  /** When the access token expires, in epoch milliseconds, counted from when the request was sent. */
  declare readonly expiresAt: number;
  /** The refresh token's remaining life in seconds, when the platform stated it (`refresh_expires_in`). */
  declare readonly refreshExpiresIn?: number;
  /** Identifier of the player within this application. */
  declare readonly openId: string;
  /** Additional user identifier, when the platform sent one. */
  declare readonly unionId?: string;
  /** Granted scopes: split on commas, trimmed, de-duplicated. */
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

/** The fields of a validated token response, as plain data. */
export type TokenSetFields = Omit<TokenSet, 'toJSON' | 'toString' | typeof inspect.custom>;
