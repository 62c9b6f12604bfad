// A small app written the way a studio would, compiled against the BUILT package (dist/, through
// the package's `exports`), to prove the published types — the Request augmentation included — work.
import express from 'express';
import session from 'express-session';
import { createClient } from 'redis';
import { Redis } from 'ioredis';
import {
  platformLogin,
  MemoryTokenStore,
  RedisTokenStore,
  PlatformTokenClient,
  isPlatformLoginError,
  type PlatformUser,
  type TokenSet,
} from 'express-platform-login';
import { startSimulator, DEMO_CLIENT_ID } from 'express-platform-login/simulator';
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';
import { Server as SocketIoServer } from 'socket.io';
import type { LoggedInPlayer, SocketLogin } from 'express-platform-login';
import { tokenStoreContract } from 'express-platform-login/testing';

const login = platformLogin({
  authUrl: 'https://auth.platform.example',
  clientId: DEMO_CLIENT_ID,
  clientSecret: 'secret',
  redirectUri: 'https://game.example/platform/callback',
  store: new MemoryTokenStore(),
  successRedirect: '/',
});

// RedisTokenStore takes either client as it is: node-redis (what connect-redis 10 uses) or ioredis.
const onNodeRedis = new RedisTokenStore({ redis: createClient(), allowPlaintextTokens: true });
const onIoredis = new RedisTokenStore({ redis: new Redis({ lazyConnect: true }) });
void onNodeRedis.close();
void onIoredis.close();

const app = express();
app.use(session({ secret: 'secret', resave: false, saveUninitialized: false }));
app.use('/platform/callback', login.callback);
app.use('/api', login.middleware());
// The player is typed as what it is on every route: possibly undefined (a visitor on an optional
// route). Behind the required middleware, `!` states what the mount guarantees.
type Equals<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const playerIsOptional: Equals<express.Request['platformUser'], PlatformUser | undefined> = true;
const loginIsBoolean: Equals<express.Request['hasPlatformLogin'], boolean> = true;
void [playerIsOptional, loginIsBoolean];
app.get('/api/me', (req, res) => {
  // @ts-expect-error: possibly undefined, as for a visitor on an optional route
  void req.platformUser.openId;
  const player: PlatformUser = req.platformUser!;
  const marker: string | undefined = req.session.platformLogin?.openId;
  res.json({ player, openId: player.openId, marker, scope: player.scope.join(' ') });
});
app.get('/api/profile', async (req, res) => {
  const answer: Response = await req.platformFetch('/userinfo');
  const token: string = await req.platformToken();
  res.json({ status: answer.status, tokenLength: token.length });
});
app.get('/', login.middleware({ optional: true }), (req, res) => {
  // Checking the player narrows it: no `!`, no second flag to keep in step.
  if (!req.platformUser) return void res.send('Enter from the platform');
  const openId: string = req.platformUser.openId;
  res.send(`Welcome, ${openId}`);
});
app.get('/api/misuse', (req, res) => {
  // @ts-expect-error: the player is read-only (the middleware sets it)
  req.platformUser = { openId: 'x', scope: [], tokenExpiresAt: 0 };
  // @ts-expect-error: hasPlatformLogin is read-only too
  req.hasPlatformLogin = true;
  res.end();
});
app.post('/logout', login.logout({ redirectTo: '/' }));
app.use(
  (err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (isPlatformLoginError(err)) {
      switch (err.code) {
        case 'ERR_PLATFORM_LOGIN_REQUIRED':
          return res.status(err.status).json({ error: err.error });
        default:
          return res.status(err.status).json({ error: err.error });
      }
    }
    next(err);
  },
);

login.on('login', (event) => {
  const id: string = event.openId;
  const ms: number = event.durationMs;
  void id;
  void ms;
});
login.on('refresh', (event) => {
  const renewed: 'same-token' | 'new-token' = event.renewed;
  void renewed;
});

// @ts-expect-error: unknown events are a type error
login.on('no-such-event', () => undefined);

const required = {
  authUrl: 'https://a.example',
  clientId: 'x',
  clientSecret: 'y',
  redirectUri: 'https://g.example/cb',
};
// @ts-expect-error: unknown options are a type error (and a SetupError at run time)
platformLogin({ ...required, refreshSkew: 1 });
// @ts-expect-error: so are a token client option's wrong type and a misspelt middleware option
platformLogin({ ...required, tokenClient: { timeoutMs: '5000' } });
// @ts-expect-error: see above
login.middleware({ optinal: true });

// A studio's own store, checked against the package's contract suite with its runner's functions.
tokenStoreContract(() => new MemoryTokenStore(), {
  testFunctions: { describe: (_name, body) => body(), test: () => undefined },
});

async function standalone(): Promise<void> {
  const sim = await startSimulator({ port: 0 });
  const client = new PlatformTokenClient({
    authUrl: sim.url,
    clientId: DEMO_CLIENT_ID,
    clientSecret: 'demo-secret',
    redirectUri: 'https://game.example/platform/callback',
  });
  const tokens: TokenSet = await client.exchangeCode(sim.issueCode());
  const scopes: string[] = tokens.scope;
  void scopes;
  await sim.close();
}
void standalone;

// Sockets (ws and socket.io, checked against their real types), jobs, scopes, the open-API bases.
const sessionMiddleware = session({ secret: 's', resave: false, saveUninitialized: false });
const server = createServer(app);
const wss = new WebSocketServer({ noServer: true });
server.on(
  'upgrade',
  login.sockets({ session: sessionMiddleware }).ws(wss, (ws, player: SocketLogin) => {
    ws.send(player.user.openId);
    player.onEnd((end) => ws.close(end.code, end.error));
  }),
);
const io = new SocketIoServer(server);
const socketIo = login.sockets({ session: sessionMiddleware }).socketIo();
io.engine.use(socketIo.engine);
io.use(socketIo.socket);
app.get('/api/pay', login.requireScopes('payments'), async (req, res) => {
  res.json({ status: (await req.platformFetch('/orders', { api: 'payments' })).status });
});
async function job(): Promise<void> {
  const player: LoggedInPlayer = await login.forPlayer('player-ada');
  const answer: Response = await player.fetch('/userinfo');
  void answer;
}
void job;
platformLogin({
  ...required,
  api: { urls: { payments: 'https://pay.platform.example/v2' }, timeoutMs: 3000 },
  afterLogin: async ({ res, player }) => {
    if (player.user.scope.length === 0) return false;
    res.locals.firstEntry = true;
  },
});
