// Logins written by hand, the references the bench compares the package with: the pattern most apps
// write (tokens in req.session, refreshed inline by the request that finds them near expiry), and
// an entry that does the package's two core jobs by hand (the code claimed once, tokens server-side).
import { hash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';

/** What the hand-written pattern keeps in the session (`expiresAt`: epoch milliseconds). */
type NaiveTokens = { accessToken: string; refreshToken: string; expiresAt: number; openId: string };

/** Settings of the hand-written logins; the token endpoint is `${authUrl}/token`. */
export type NaiveSettings = Record<'authUrl' | 'clientId' | 'clientSecret', string> & {
  redirectUri: string;
  /** Refresh inline when less than this is left before expiry. */
  refreshSkewMs: number;
};

/** The session as this pattern sees it. */
type NaiveSession = Request['session'] & { tokens?: NaiveTokens; openId?: string };

type TokenAnswer = Partial<
  Record<'access_token' | 'refresh_token' | 'open_id' | 'error', string>
> & {
  expires_in?: number | string;
};

/** POSTs `parameters` with the client's credentials to the token endpoint; its JSON answer. */
const postToken = async (settings: NaiveSettings, parameters: Record<string, string>) => {
  const { authUrl, clientId, clientSecret } = settings;
  const res = await fetch(`${authUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ ...parameters, client_id: clientId, client_secret: clientSecret }),
  });
  return (await res.json()) as TokenAnswer;
};

const tokensOf = (answer: TokenAnswer, previous?: NaiveTokens): NaiveTokens => ({
  accessToken: answer.access_token!,
  refreshToken: answer.refresh_token ?? previous!.refreshToken,
  expiresAt: Date.now() + Number(answer.expires_in) * 1000,
  openId: answer.open_id ?? previous!.openId,
});

const promised = (req: Request, step: 'regenerate' | 'save'): Promise<void> =>
  new Promise((resolve, reject) =>
    req.session[step]((err: unknown) => (err ? reject(err) : resolve())),
  );

/** A callback: the code exchanged (400 if refused), the session regenerated, `keep`, saved, 303. */
const callbackWith =
  (
    settings: NaiveSettings,
    keep: (req: Request, tokens: NaiveTokens) => Promise<void>,
    claim: (code: string, res: Response) => Promise<boolean> = async () => true,
  ): RequestHandler =>
  async (req, res) => {
    // Express 5 hands a rejected handler's error to the error handler.
    const code = String(req.query.code);
    if (!(await claim(code, res))) return;
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: settings.redirectUri };
    const answer = await postToken(settings, exchange);
    if (answer.error !== undefined) return void res.status(400).json({ error: answer.error });
    await promised(req, 'regenerate');
    await keep(req, tokensOf(answer));
    await promised(req, 'save');
    res.redirect(303, '/');
  };

/**
 * The hand-written pattern, as a typical app has it on purpose: no lock, no single-flight, the
 * session written back whole, and the tokens dropped on `invalid_grant` (the player logs in again).
 */
export function naiveSessionRefresh(settings: NaiveSettings): {
  callback: RequestHandler;
  middleware: RequestHandler;
} {
  const callback = callbackWith(settings, async (req, tokens) => {
    (req.session as NaiveSession).tokens = tokens;
  });
  const middleware: RequestHandler = async (req, res, next) => {
    const session = req.session as NaiveSession;
    const tokens = session.tokens;
    if (tokens === undefined) return void res.status(401).json({ error: 'login_required' });
    if (tokens.expiresAt - Date.now() < settings.refreshSkewMs) {
      const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refreshToken };
      const answer = await postToken(settings, refresh);
      if (answer.error === 'invalid_grant') {
        delete session.tokens;
        return void res.status(401).json({ error: 'invalid_grant' });
      }
      if (answer.error !== undefined || answer.access_token === undefined)
        return void res.status(503).json({ error: 'platform_unavailable' });
      session.tokens = tokensOf(answer, tokens);
    }
    // The access token for the handler.
    res.locals.accessToken = session.tokens!.accessToken;
    next();
  };
  return { callback, middleware };
}

/**
 * A hand-written entry doing the package's two core jobs and nothing more: the code claimed once
 * (`SET NX`), the tokens in Redis under the new session's id; four Redis commands, as the package.
 */
export function serverSideCallback(
  settings: NaiveSettings & {
    /** `SET key value PX ttlMs [NX]` on the app's client: false when NX found the key. */
    set: (key: string, value: string, ttlMs: number, nx: boolean) => Promise<boolean>;
    prefix: string;
    tokenTtlMs: number;
  },
): RequestHandler {
  const { set, prefix, tokenTtlMs } = settings;
  const claim = async (code: string, res: Response): Promise<boolean> => {
    const key = `${prefix}code:${hash('sha256', code, 'base64url')}`;
    const claimed = await set(key, '1', 600_000, true);
    if (!claimed) res.status(409).json({ error: 'code_already_used' });
    return claimed;
  };
  return callbackWith(
    settings,
    async (req, tokens) => {
      await set(`${prefix}tokens:${req.sessionID}`, JSON.stringify(tokens), tokenTtlMs, false);
      (req.session as NaiveSession).openId = tokens.openId;
    },
    claim,
  );
}
