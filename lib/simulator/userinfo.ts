// GET /userinfo: the stand-in for the platform's open APIs. The spec leaves how a token is presented
// open, so both RFC 6750 ways work: `Authorization: Bearer …` or `?access_token=…`.
import type { RequestHandler } from 'express';
import { sendJson } from './write-response';
import type { SimulatorState } from './platform-state';

const REALM = 'Bearer realm="platform-simulator"';

function presentedTokens(authorization: string | undefined, query: unknown): string[] {
  const tokens: string[] = [];
  const bearer = /^Bearer +([\x21-\x7e]+) *$/i.exec(authorization ?? '');
  if (bearer?.[1] !== undefined) tokens.push(bearer[1]);
  const fromQuery = (query as Record<string, unknown> | undefined)?.access_token;
  if (typeof fromQuery === 'string' && fromQuery !== '') tokens.push(fromQuery);
  return tokens;
}

/** The handler of GET /userinfo: `{ open_id, unionid, nickname }` for a valid access token. */
export function userinfoEndpoint(state: SimulatorState): RequestHandler {
  return (req, res) => {
    state.calls.userinfo += 1;
    const tokens = presentedTokens(req.headers.authorization, req.query);
    if (tokens.length > 1) {
      // RFC 6750 2: a client must not use more than one method to present the token.
      sendJson(
        res,
        400,
        { error: 'invalid_request', error_description: 'send the access token only once' },
        { 'WWW-Authenticate': `${REALM}, error="invalid_request"` },
      );
      return;
    }
    const grant = tokens[0] === undefined ? undefined : state.grantsByAccessToken.get(tokens[0]);
    if (grant === undefined || state.now() >= grant.accessExpiresAt) {
      const description =
        tokens[0] === undefined ? 'no access token' : 'access token is unknown or expired';
      sendJson(
        res,
        401,
        { error: 'invalid_token', error_description: description },
        { 'WWW-Authenticate': tokens[0] === undefined ? REALM : `${REALM}, error="invalid_token"` },
      );
      return;
    }
    const { player } = grant;
    if (!player.scope.includes('user_info')) {
      sendJson(
        res,
        403,
        { error: 'insufficient_scope', error_description: 'the player did not grant user_info' },
        { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="user_info"` },
      );
      return;
    }
    const body: Record<string, string> = { open_id: state.openIdFor(grant.clientId, player) };
    if (state.config.includeUnionId && player.unionId !== undefined) body.unionid = player.unionId;
    body.nickname = player.nickname;
    sendJson(res, 200, body);
  };
}
