// Logins written by hand, the references the bench compares the package with: the pattern most apps
// write (tokens in req.session, refreshed inline by the request that finds them near expiry), and
// an entry that does the package's two core jobs by hand (the code claimed once, tokens server-side).
import { hash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Session, SessionData } from 'express-session';

/** What the hand-written pattern keeps in the session. */
export interface NaiveTokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  openId: string;
}

/** Settings of the hand-written pattern. */
export interface NaiveSettings {
  /** The platform's base URL; the token endpoint is `${authUrl}/token`. */
  authUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Refresh inline when less than this is left before expiry. */
  refreshSkewMs: number;
}

/** The session as this pattern sees it. */
type NaiveSession = Session & Partial<SessionData> & { tokens?: NaiveTokens };

/** The access token the middleware left for the handler. */
export const naiveAccessToken = (req: Request): string | undefined =>
  (req as Request & { naiveAccessToken?: string }).naiveAccessToken;

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number | string;
  open_id?: string;
  error?: string;
}

/** POSTs `parameters` with the client's credentials to the token endpoint; its JSON answer. */
function tokenEndpointOf(settings: NaiveSettings) {
  const tokenEndpoint = `${settings.authUrl}/token`;
  return async (parameters: Record<string, string>): Promise<TokenAnswer> => {
    const res = await fetch(tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        ...parameters,
        client_id: settings.clientId,
        client_secret: settings.clientSecret,
      }),
    });
    return (await res.json()) as TokenAnswer;
  };
}

const tokensOf = (answer: TokenAnswer, previous?: NaiveTokens): NaiveTokens => ({
  accessToken: answer.access_token!,
  refreshToken: answer.refresh_token ?? previous!.refreshToken,
  expiresAt: Date.now() + Number(answer.expires_in) * 1000,
  openId: answer.open_id ?? previous!.openId,
});

const regenerate = (req: Request): Promise<void> =>
  new Promise((resolve, reject) =>
    req.session.regenerate((err: unknown) => (err ? reject(err) : resolve())),
  );
const save = (req: Request): Promise<void> =>
  new Promise((resolve, reject) =>
    req.session.save((err: unknown) => (err ? reject(err) : resolve())),
  );

/**
 * The callback and the middleware of the hand-written pattern. What it does is what a typical app
 * does, on purpose: no lock, no single-flight, the whole session written back by express-session at
 * the end of the request, and on `invalid_grant` the tokens are dropped (the player must log in
 * again), since the refresh token is dead as far as this request can tell.
 */
export function naiveSessionRefresh(settings: NaiveSettings): {
  callback: RequestHandler;
  middleware: RequestHandler;
} {
  const postToken = tokenEndpointOf(settings);

  const callback: RequestHandler = async (req, res, next) => {
    try {
      const answer = await postToken({
        grant_type: 'authorization_code',
        code: String(req.query.code),
        redirect_uri: settings.redirectUri,
      });
      if (answer.error !== undefined) {
        res.status(400).json({ error: answer.error });
        return;
      }
      await regenerate(req);
      (req.session as NaiveSession).tokens = tokensOf(answer);
      await save(req);
      res.redirect(303, '/');
    } catch (error) {
      next(error);
    }
  };

  const middleware: RequestHandler = async (req, res, next) => {
    try {
      const session = req.session as NaiveSession;
      const tokens = session.tokens;
      if (tokens === undefined) {
        res.status(401).json({ error: 'login_required' });
        return;
      }
      let accessToken = tokens.accessToken;
      if (tokens.expiresAt - Date.now() < settings.refreshSkewMs) {
        const answer = await postToken({
          grant_type: 'refresh_token',
          refresh_token: tokens.refreshToken,
        });
        if (answer.error === 'invalid_grant') {
          delete session.tokens;
          res.status(401).json({ error: 'invalid_grant' });
          return;
        }
        if (answer.error !== undefined || answer.access_token === undefined) {
          res.status(503).json({ error: 'platform_unavailable' });
          return;
        }
        session.tokens = tokensOf(answer, tokens);
        accessToken = session.tokens.accessToken;
      }
      (req as Request & { naiveAccessToken?: string }).naiveAccessToken = accessToken;
      next();
    } catch (error) {
      next(error);
    }
  };

  return { callback, middleware };
}

/**
 * The entry of a hand-written login that does the package's two core jobs and nothing more: the
 * code is claimed once across processes (`SET NX`, so a replay never reaches the platform) and the
 * tokens are kept server-side in Redis under the new session's id, the session holding only the
 * player's openId. Four Redis commands, as the package's entry: the claim, the regenerate's DEL,
 * the tokens' SET and the session's SET. None of the package's other checks (the platform's
 * origin, the address's failure window, the platform's hold, the answer's validation, the login
 * generation, events).
 */
export function serverSideCallback(
  settings: NaiveSettings & {
    /** `SET key 1 PX ttlMs NX` on the app's client: true when set. */
    claimOnce: (key: string, ttlMs: number) => Promise<boolean>;
    /** `SET key value PX ttlMs` on the app's client. */
    setWithTtl: (key: string, value: string, ttlMs: number) => Promise<void>;
    prefix: string;
    tokenTtlMs: number;
  },
): RequestHandler {
  const postToken = tokenEndpointOf(settings);
  const { claimOnce, setWithTtl, prefix, tokenTtlMs } = settings;
  return async (req, res, next) => {
    try {
      const code = String(req.query.code);
      const claimKey = `${prefix}code:${hash('sha256', code, 'base64url')}`;
      if (!(await claimOnce(claimKey, 600_000))) {
        res.status(409).json({ error: 'code_already_used' });
        return;
      }
      const answer = await postToken({
        grant_type: 'authorization_code',
        code,
        redirect_uri: settings.redirectUri,
      });
      if (answer.error !== undefined) {
        res.status(400).json({ error: answer.error });
        return;
      }
      await regenerate(req);
      const tokens = tokensOf(answer);
      await setWithTtl(`${prefix}tokens:${req.sessionID}`, JSON.stringify(tokens), tokenTtlMs);
      (req.session as NaiveSession & { openId?: string }).openId = tokens.openId;
      await save(req);
      res.redirect(303, '/');
    } catch (error) {
      next(error);
    }
  };
}
