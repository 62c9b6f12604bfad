// One way to build the app under test: express + express-session + the package, mounted the way
// the README tells users to, with a few routes that show what a handler sees.
import express, { type Express, type RequestHandler } from 'express';
import session, { type Store } from 'express-session';
import request from 'supertest';
import {
  platformLogin,
  RedisSessionStore,
  type PlatformLogin,
  type PlatformLogger,
  type PlatformLoginOptions,
} from 'express-platform-login';
import {
  DEMO_CLIENT_ID,
  DEMO_CLIENT_SECRET,
  type PlatformSimulator,
} from 'express-platform-login/simulator';

export const TEST_REDIRECT_URI = 'http://127.0.0.1:3999/platform/callback';

/** A registration whose secret is a canary: a message or error that quotes it fails its test. */
export const CANARY_SECRET = 'canary-secret-77d2';
export const CANARY_REGISTRATION = {
  authUrl: 'https://auth.platform.example',
  clientId: 'demo-game',
  clientSecret: CANARY_SECRET,
  redirectUri: 'https://game.example/platform/callback',
};
export const SESSION_SECRET = 'a-test-session-secret-that-is-long-enough';

export interface TestAppOptions {
  sim: PlatformSimulator;
  /** Options of platformLogin() on top of the simulator's demo registration. */
  login?: Partial<PlatformLoginOptions>;
  /** express-session store; defaults to express-session's MemoryStore. */
  sessionStore?: Store;
  /** Leave express-session out, to test the guard rail. */
  withoutSession?: boolean;
}

export interface TestApp {
  app: Express;
  login: PlatformLogin;
}

/**
 * The entry context of a test app that says nothing of its own: the platform's pages are the
 * simulator's (its lobby opens the game), checked as in production. Tests enter as a client that
 * sends no Fetch Metadata or Referer (supertest, fetch), admitted on purpose as a platform webview
 * would be; a browser's forged entry is still refused.
 */
export function simulatorEntryContext(
  sim: PlatformSimulator,
): Pick<PlatformLoginOptions, 'platformOrigins' | 'entry'> {
  return {
    platformOrigins: [new URL(sim.url).origin],
    entry: { context: { allowMissingHeaders: true } },
  };
}

/**
 * The logger of a test app that names none: the package's default writes its warnings and errors
 * (the 5xx and refusals tests cause on purpose) to the console, which would bury a failing test's
 * output. A test about what is logged passes a logger of its own and asserts its lines; one about
 * the default passes `logger: undefined`.
 */
export const QUIET: PlatformLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** A logger that keeps the message of each warning (a test asserts what the package warned of). */
export function warningsLogger(): { logger: PlatformLogger; warnings: string[] } {
  const warnings: string[] = [];
  return { logger: { ...QUIET, warn: (_fields, message) => warnings.push(message) }, warnings };
}

/** An API client without a login is answered 401 login_required at `path`. */
export async function expectLoginRequired(app: Express, path: string): Promise<void> {
  const res = await request(app).get(path).set('Accept', 'application/json');
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ error: 'login_required' });
}

export function loginOptions(
  sim: PlatformSimulator,
  extra: Partial<PlatformLoginOptions> = {},
): PlatformLoginOptions {
  const saysItsOwn = 'platformOrigins' in extra || extra.entry?.context !== undefined;
  const context = saysItsOwn ? {} : simulatorEntryContext(sim);
  return {
    authUrl: sim.url,
    clientId: DEMO_CLIENT_ID,
    clientSecret: DEMO_CLIENT_SECRET,
    redirectUri: TEST_REDIRECT_URI,
    logger: QUIET,
    ...context,
    ...extra,
    // A test's `entry` tuning (a failure limit) keeps the simulator's entry context.
    entry: { ...context.entry, ...extra.entry },
  };
}

export interface EntryAppOptions {
  /** express-session's store (its MemoryStore by default) and secret (SESSION_SECRET). */
  store?: Store;
  secret?: string;
  /** Anything a test puts between the session and the callback. */
  before?: (app: Express) => void;
  /** The login's middleware on /api and GET /api/me answering the player, as the README has them. */
  api?: boolean;
}

/**
 * The app a test builds its own routes on: express, express-session and the login's callback at
 * /platform/callback (with `api`, its middleware and GET /api/me). The test adds the login's error
 * handler after its routes where it wants the package's answers.
 */
export function entryApp(login: PlatformLogin, options: EntryAppOptions = {}): Express {
  const app = express();
  const { store, secret = SESSION_SECRET } = options;
  app.use(
    session({ secret, resave: false, saveUninitialized: false, ...(store ? { store } : {}) }),
  );
  options.before?.(app);
  app.use('/platform/callback', login.callback);
  if (options.api) {
    app.use('/api', login.middleware());
    app.get('/api/me', (req, res) => void res.json(req.platformUser));
  }
  return app;
}

/** express-session as the tests mount it, its sessions in Redis on `redis` (in `store`, to close). */
export function redisSessions(
  redis: ConstructorParameters<typeof RedisSessionStore>[0]['redis'],
  store = new RedisSessionStore({ redis }),
) {
  return session({ secret: SESSION_SECRET, resave: false, saveUninitialized: false, store });
}

/** GET /api/token's handler: the player's access token; a failure goes on to the error handler. */
export const answerToken: RequestHandler = (req, res, next) => {
  req.platformToken().then((accessToken) => void res.json({ accessToken }), next);
};

export function createTestApp(options: TestAppOptions): TestApp {
  const login = platformLogin(loginOptions(options.sim, options.login));
  const app = options.withoutSession
    ? express().use('/platform/callback', login.callback)
    : entryApp(login, { store: options.sessionStore });
  app.get('/optional', login.middleware({ optional: true }), (req, res) => {
    res.json({ player: req.platformUser ?? null });
  });
  app.use('/api', login.middleware());
  app.get('/api/me', (req, res) => void res.json(req.platformUser));
  app.get('/api/token', answerToken);
  app.get('/api/profile', async (req, res, next) => {
    try {
      const answer = await req.platformFetch('/userinfo');
      res.status(answer.status).json(await answer.json());
    } catch (error) {
      next(error);
    }
  });
  // A slow handler that changes its session: express-session writes the session back when it ends.
  app.get('/api/slow', async (req, res) => {
    await new Promise((resolve) => setTimeout(resolve, Number(req.query.ms ?? 300)));
    (req.session as unknown as { visits?: number }).visits = Date.now();
    res.json({ accessToken: await req.platformToken() });
  });
  app.post('/logout', login.logout());
  // Errors the handlers pass on (platformToken / platformFetch) get the package's answers too.
  app.use(login.errorHandler());
  return { app, login };
}
