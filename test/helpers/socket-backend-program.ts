// A game backend process with WebSockets, for the multi-process socket tests: express-session on
// connect-redis and the package on RedisTokenStore (shared Redis), `GET /ws` through the `ws`
// adapter and socket.io on /socket.io, each answering `hello` and `profile` as docs/example-app.md
// says. Started by spawn-socket-backends.ts; prints "listening <port>" when ready. Environment:
// REDIS_URL, SIM_URL, KEY_PREFIX, and EPL_TEST_REDIS_CLIENT (unset by the suites, for a run by hand:
// node-redis 6 or 5 with connect-redis 10; else ioredis with connect-redis 8.1). Every line it
// logs goes to stdout, for the leak scan.
import { URL } from 'node:url';
import express from 'express';
import session from 'express-session';
import { RedisStore as IoRedisStore } from 'connect-redis8';
import { RedisStore } from 'connect-redis';
import { Redis } from 'ioredis';
import { createClient as createClient6 } from 'redis';
import { createClient as createClient5 } from 'redis5';
import { WebSocketServer, type WebSocket } from 'ws';
import { Server as SocketIoServer } from 'socket.io';
import { platformLogin, RedisTokenStore, type SocketLogin } from '../../lib';

const prefix = process.env.KEY_PREFIX ?? 'ws:';
const clientKind = process.env.EPL_TEST_REDIS_CLIENT ?? 'ioredis';
/** The Redis client of sessions and tokens, and the session store on it. */
function connect() {
  if (!clientKind.startsWith('node-redis')) {
    const client = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    const store = new IoRedisStore({ client, prefix: `${prefix}s:` });
    return { client, store, close: () => client.disconnect() };
  }
  const url = process.env.REDIS_URL!;
  const client = clientKind.startsWith('node-redis 5')
    ? (createClient5({ url }) as unknown as ReturnType<typeof createClient6>)
    : createClient6({ url });
  void client.connect();
  const store = new RedisStore({ client: client as never, prefix: `${prefix}s:` });
  return { client, store, close: () => void client.destroy() };
}
const redis = connect();
const login = platformLogin({
  authUrl: process.env.SIM_URL!,
  clientId: 'demo-game',
  clientSecret: 'demo-secret',
  redirectUri: 'http://127.0.0.1:3999/platform/callback',
  store: new RedisTokenStore({
    redis: redis.client,
    prefix: `${prefix}t:`,
    sessions: { client: redis.client, prefix: `${prefix}s:` },
  }),
  logger: {
    debug: (fields, message) => console.log('debug', JSON.stringify(fields), message),
    info: (fields, message) => console.log('info', JSON.stringify(fields), message),
    warn: (fields, message) => console.log('warn', JSON.stringify(fields), message),
    error: (fields, message) => console.log('error', JSON.stringify(fields), message),
  },
});
let refreshes = 0;
login.on('refresh', () => (refreshes += 1));

const sessionMiddleware = session({
  store: redis.store,
  secret: 'a-shared-session-secret-for-all-processes',
  resave: false,
  saveUninitialized: false,
});

const app = express();
app.use(sessionMiddleware);
app.use('/platform/callback', login.callback);
app.post('/logout', login.logout());
app.post('/admin/logout-player', async (req, res) => {
  res.json({ sessions: await login.logoutPlayer(String(req.query.openId)) });
});
app.get('/api/token', login.middleware(), async (req, res, next) => {
  try {
    res.json({ accessToken: await req.platformToken() });
  } catch (error) {
    next(error);
  }
});
app.get('/stats', (_req, res) => {
  res.json({ refreshes, pid: process.pid });
});
app.use(login.errorHandler());

/** What both kinds of socket answer: `profile` is the open API's /userinfo with the player's token. */
async function profileOf(player: SocketLogin): Promise<{ status: number; body: unknown }> {
  const answer = await player.fetch('/userinfo');
  return { status: answer.status, body: await answer.json() };
}

const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
});

const sockets = login.sockets({ session: sessionMiddleware });
const wss = new WebSocketServer({ noServer: true });
const upgradeWs = sockets.ws(wss, (ws: WebSocket, player) => {
  ws.send(JSON.stringify({ type: 'hello', openId: player.user.openId, pid: process.pid }));
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as { type?: string };
    if (message.type !== 'profile') return;
    profileOf(player).then(
      (profile) => ws.send(JSON.stringify({ type: 'profile', ...profile })),
      (error: { error?: string }) =>
        ws.send(JSON.stringify({ type: 'error', error: error.error ?? 'internal_error' })),
    );
  });
});
server.on('upgrade', (req, socket, head) => {
  if (new URL(req.url ?? '/', 'http://x').pathname === '/ws') upgradeWs(req, socket, head);
});

const io = new SocketIoServer(server, { destroyUpgrade: false });
const socketIo = sockets.socketIo();
io.engine.use(socketIo.engine);
io.use(socketIo.socket);
io.on('connection', (socket) => {
  const player = socket.data.platformLogin as SocketLogin;
  socket.emit('hello', { openId: player.user.openId, pid: process.pid });
  socket.on('profile', (ack: (profile: unknown) => void) => {
    profileOf(player).then(ack, (error: { error?: string }) =>
      ack({ error: error.error ?? 'internal_error' }),
    );
  });
});

process.on('SIGTERM', () => {
  server.close();
  redis.close();
});
