// The example game backend's routes (README "Routes"), mounted the way a studio would.
import express, { type Express } from 'express';
import session from 'express-session';
import { join } from 'node:path';
import type { PlatformLogin } from 'express-platform-login';
import { FAVICON_SVG, playerPage, visitorPage } from './page';

/** The app setting that holds the session middleware, for `GET /ws`. */
export const SESSION_MIDDLEWARE = 'session middleware';

/** What the routes are built from; start.ts assembles it from the configuration. */
export interface ExampleAppParts {
  login: PlatformLogin;
  /** express-session store (RedisSessionStore); undefined: express-session's MemoryStore. */
  sessionStore: session.Store | undefined;
  sessionSecret: string;
  /** Session lifetime (SESSION_MAX_AGE_SECONDS): the session store and the token records follow it. */
  sessionMaxAgeSeconds: number;
  /** Where a logged-out visitor goes to enter the game from the platform. */
  /** Where a visitor enters, one link per registration, the first one first. */
  lobbyUrls: { name: string; url: string }[];
  /** False until the stores answer; /healthz says 503 until then. */
  isReady: () => boolean;
  /** `GET /metrics` (Prometheus text format). */
  metricsHandler: express.RequestHandler;
  /** Express's `trust proxy` (TRUST_PROXY): how far client addresses come from X-Forwarded-For. */
  trustProxy: boolean | number | string | undefined;
  /** NODE_ENV=production: served over https only, so the session cookie is Secure. */
  production: boolean;
  /** `login.frameAncestors()` where the platform's origins are known: only its pages frame the game. */
  frameAncestors: express.RequestHandler | undefined;
}

/** The player's nickname from the open API; the page waits for it 1.5 s at most (then shows the openId). */
async function nicknameOf(req: express.Request): Promise<string | undefined> {
  try {
    const answer = await req.platformFetch('/userinfo', { signal: AbortSignal.timeout(1500) });
    const body = (await answer.json()) as { nickname?: unknown };
    return answer.ok && typeof body.nickname === 'string' ? body.nickname : undefined;
  } catch {
    return undefined;
  }
}

/** For answers that are one player's, or true only now. */
const noStore: express.RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/** The example's Express app: health check, game page, callback, API and logout. */
export function createExampleApp(parts: ExampleAppParts): Express {
  const { login } = parts;
  const app = express();
  app.disable('x-powered-by');
  // The client address (req.ip) that failed entries are counted by; unset: the connection's peer.
  if (parts.trustProxy !== undefined) app.set('trust proxy', parts.trustProxy);
  // No browser second-guesses a response's type; no other site frames the game (to make a player
  // click "Log out everywhere" unawares).
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  if (parts.frameAncestors) app.use(parts.frameAncestors);

  app.get('/healthz', (_req, res) => {
    if (parts.isReady()) res.json({ status: 'ok' });
    else res.status(503).json({ error: 'starting' });
  });
  // Readiness (for a load balancer): 503 with the reason while the token store does not answer.
  app.get('/readyz', noStore, async (_req, res) => {
    const report = await parts.login.ready();
    if (report.ready) res.json(report);
    else res.status(503).json({ error: 'store_unavailable', ...report });
  });
  app.get('/metrics', parts.metricsHandler);
  app.get('/favicon.ico', (_req, res) => {
    res.type('image/svg+xml').setHeader('Cache-Control', 'public, max-age=86400').send(FAVICON_SVG);
  });
  // The page's script, on its own path: a static handler mounted at `/` would stat the disk for
  // every API request before the session is even read.
  app.use('/assets', express.static(join(__dirname, 'public'), { index: false, maxAge: 0 }));

  const sessionMiddleware = session({
    ...(parts.sessionStore ? { store: parts.sessionStore } : {}),
    secret: parts.sessionSecret,
    resave: false,
    saveUninitialized: false,
    // The server-side session lives SESSION_MAX_AGE_SECONDS after the last request, and the package
    // gives the token record the same lifetime. On Redis the session store keeps that lifetime
    // (its ttlSeconds) and the cookie ends with the browser, as the README's quick start has it:
    // the browser keeps nothing longer than it needs, and express-session, with no expiry to
    // re-sign on each request, spends about 10 µs less per request (bench request-cost). Its
    // MemoryStore knows a session's end only from the cookie's maxAge.
    // The cookie carries the whole login. In production it goes over https only (behind a proxy that
    // ends TLS, TRUST_PROXY tells Express the request was https); locally the example is plain http.
    cookie: {
      httpOnly: true,
      sameSite: 'lax',
      secure: parts.production,
      ...(parts.sessionStore ? {} : { maxAge: parts.sessionMaxAgeSeconds * 1000 }),
    },
  });
  app.use(sessionMiddleware);
  // GET /ws reads the session of its upgrade with the very same middleware (start.ts, game-socket.ts).
  app.set(SESSION_MIDDLEWARE, sessionMiddleware);

  // Every registration's callback, each at its redirect_uri's path (/platform/callback, …).
  app.use(login.callbacks);

  app.get('/', noStore, login.middleware({ optional: true }), async (req, res) => {
    const player = req.platformUser; // undefined for a visitor: the route is optional
    if (!player) return void res.type('html').send(visitorPage(parts.lobbyUrls));
    res.type('html').send(playerPage(player, await nicknameOf(req)));
  });

  app.use('/api', noStore, login.middleware());
  app.get('/api/me', (req, res) => {
    // `!`: the middleware above answered 401 to any request without a login.
    const { openId, unionId, scope, registration } = req.platformUser!;
    // Always the same four keys: a player without a unionid gets null.
    res.json({ openId, unionId: unionId ?? null, scope, registration });
  });
  // Every login of this player: every registration, browser and process (joined by unionid).
  app.post('/api/logout-everywhere', login.logoutEverywhere());
  app.get('/api/profile', async (req, res, next) => {
    try {
      const answer = await req.platformFetch('/userinfo', {
        headers: { Accept: 'application/json' },
      });
      const body: unknown = await answer.json().catch(() => ({ error: 'platform_error' }));
      res.status(answer.ok ? 200 : 502).json(answer.ok ? body : { error: 'platform_error' });
    } catch (error) {
      next(error);
    }
  });
  app.post('/logout', login.logout());

  app.use((_req, res) => {
    res.status(404).json({ error: 'not_found' });
  });
  // The package's errors, and a Redis outage seen by express-session (the session store), get the
  // package's documented answers; anything else is a plain 500 without details.
  app.use(login.errorHandler());
  app.use(((err, _req, res, _next) => {
    console.error('[example-app] unexpected error:', err instanceof Error ? err.name : typeof err);
    res.status(500).json({ error: 'internal_error' });
  }) as express.ErrorRequestHandler);
  return app;
}
