// The OAuth rules of POST /token (the platform's token API, as the README's simulator section
// describes it; errors as RFC 6749 section 5.2): which request gets which tokens or which error.
// Parameters arrive already collected; token-endpoint.ts does HTTP.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { SimulatorClient } from './options';
import type { GrantRecord, SimulatorState } from './platform-state';
import type { TokenOutcome } from './answer-style';

/** The parameters of a token request that the simulator reads, in the order they are reported. */
export const TOKEN_PARAM_NAMES = [
  'grant_type',
  'client_id',
  'client_secret',
  'code',
  'redirect_uri',
  'refresh_token',
] as const;

/** Those parameters as received; absent or empty ones are undefined. */
export type TokenParams = Partial<Record<(typeof TOKEN_PARAM_NAMES)[number], string>>;

/** An RFC 6749 section 5.2 error: 401 for invalid_client, 400 for the rest. */
export function oauthError(error: string, description: string): TokenOutcome {
  return {
    status: error === 'invalid_client' ? 401 : 400,
    body: { error, error_description: description },
  };
}

/** The refusal of a code or refresh token, for why. */
const invalidGrant = (why: string): TokenOutcome => oauthError('invalid_grant', why);

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Compares secrets in constant time (over their digests, which have equal lengths). */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

function authenticateClient(
  state: SimulatorState,
  params: TokenParams,
): SimulatorClient | TokenOutcome {
  const client = state.config.clients.find((c) => c.clientId === params.client_id);
  if (
    client === undefined ||
    params.client_secret === undefined ||
    !sameSecret(client.clientSecret, params.client_secret)
  ) {
    return oauthError('invalid_client', 'client authentication failed');
  }
  return client;
}

function missing(
  params: TokenParams,
  names: readonly (keyof TokenParams)[],
): TokenOutcome | undefined {
  const absent = names.find((name) => params[name] === undefined);
  return absent && oauthError('invalid_request', `missing parameter ${absent}`);
}

function tokenResponse(
  state: SimulatorState,
  grant: GrantRecord,
  by: 'authorization_code' | 'refresh_token',
): TokenOutcome {
  const body: Record<string, unknown> = {
    access_token: grant.accessToken,
    expires_in: state.config.accessTokenLifetimeSeconds,
    refresh_token: grant.refreshToken,
    open_id: state.openIdFor(grant.clientId, grant.player),
    scope: grant.player.scope.join(','),
  };
  const withheld = by === 'authorization_code' && state.config.unionIdOnRefreshOnly;
  if (state.config.includeUnionId && !withheld && grant.player.unionId !== undefined) {
    body.unionid = grant.player.unionId;
  }
  const refreshLeftMs = grant.refreshExpiresAt - state.now();
  return {
    status: 200,
    body,
    refreshExpiresInSeconds: Math.max(1, Math.ceil(refreshLeftMs / 1000)),
  };
}

/** grant_type=authorization_code: exchange a single-use code for tokens. */
export function exchangeCode(state: SimulatorState, params: TokenParams): TokenOutcome {
  const absent = missing(params, ['client_id', 'client_secret', 'code', 'redirect_uri']);
  if (absent) return absent;
  const client = authenticateClient(state, params);
  if ('status' in client) return client;

  const record = state.codes.get(params.code!);
  if (record === undefined) return invalidGrant('authorization code is unknown');
  if (record.clientId !== client.clientId) {
    return invalidGrant('authorization code was issued to another client');
  }
  if (record.used) return invalidGrant('authorization code was already used');
  // Any presentation by its own client uses the code up, a failed one too (RFC 6749 10.5: one use).
  record.used = true;
  if (state.now() >= record.expiresAt) return invalidGrant('authorization code has expired');
  if (record.redirectUri !== undefined && record.redirectUri !== params.redirect_uri) {
    const why = 'redirect_uri does not match the one the authorization code was issued for';
    return invalidGrant(why);
  }
  const player = state.findPlayer(record.openId);
  if (player === undefined) return invalidGrant('player no longer exists');
  const grant = state.createGrant(client.clientId, player, record.redirectUri);
  return tokenResponse(state, grant, 'authorization_code');
}

/** grant_type=refresh_token: renew the access token (kept while unexpired, replaced once expired). */
export function refreshTokens(state: SimulatorState, params: TokenParams): TokenOutcome {
  const absent = missing(params, ['refresh_token']);
  if (absent) return absent;
  // Client credentials are optional here, but when sent they must be right.
  let clientId: string | undefined;
  if (params.client_id !== undefined || params.client_secret !== undefined) {
    const client = authenticateClient(state, params);
    if ('status' in client) return client;
    clientId = client.clientId;
  }

  const grant = state.grantsByRefreshToken.get(params.refresh_token!);
  if (grant === undefined) {
    if (state.retired.has(params.refresh_token!)) state.retiredTokenReuses += 1;
    return invalidGrant('refresh token is unknown, revoked or rotated');
  }
  if (state.now() >= grant.refreshExpiresAt) {
    state.grantsByRefreshToken.delete(grant.refreshToken);
    return invalidGrant('refresh token has expired; the player must authorize again');
  }
  if (clientId !== undefined && clientId !== grant.clientId) {
    state.foreignClientRefreshes += 1;
    return invalidGrant('refresh token was issued to another client');
  }
  if (
    params.redirect_uri !== undefined &&
    grant.redirectUri !== undefined &&
    params.redirect_uri !== grant.redirectUri
  ) {
    return invalidGrant('redirect_uri does not match the one used at authorization');
  }
  state.renewAccessToken(grant);
  if (state.config.rotateRefreshTokens) state.rotateRefreshToken(grant);
  return tokenResponse(state, grant, 'refresh_token');
}
