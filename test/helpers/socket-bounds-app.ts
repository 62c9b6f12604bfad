// A game backend in the test's own process for the socket bounds tests: express-session on the
// package's RedisSessionStore, the package on RedisTokenStore, `GET /ws` through the `ws` adapter
// and socket.io with connection state recovery (its defaults: middlewares skipped on a resumed
// socket), both answering `hello` and `profile` as docs/example-app.md says. `POST /destroy` ends
// the session the app's own way (`req.session.destroy()`), not through `login.logout()`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import type { Redis } from 'ioredis';
import { WebSocketServer } from 'ws';
import { Server as SocketIoServer } from 'socket.io';
import { platformLogin, RedisTokenStore, type SocketLogin } from 'express-platform-login';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { RedisSessionStore } from '../../lib/session-store/redis-session-store';
import { loginOptions, SESSION_SECRET } from './test-app';

export interface SocketBoundsApp {
  url: string;
  close(): Promise<void>;
}

export interface SocketBoundsOptions {
  sim: PlatformSimulator;
  redis: Redis;
  prefix: string;
  /** The session cookie's maxAge: the token record's lifetime follows it. */
  sessionMaxAgeMs?: number;
}

/** What both kinds of socket answer: `profile` is the open API's /userinfo with the player's token. */
async function profileOf(player: SocketLogin): Promise<{ status: number; body: unknown }> {
  const answer = await player.fetch('/userinfo');
  return { status: answer.status, body: await answer.json() };
}
const errorOf = (error: { error?: string }) => ({ error: error.error ?? 'internal_error' });

export async function startSocketBoundsApp(options: SocketBoundsOptions): Promise<SocketBoundsApp> {
  const { sim, redis, prefix } = options;
  const tokenStore = new RedisTokenStore({ redis, prefix: `${prefix}t:` });
  const sessionStore = new RedisSessionStore({ redis, prefix: `${prefix}s:` });
  const login = platformLogin(loginOptions(sim, { store: tokenStore }));
  const sessionMiddleware = session({
    store: sessionStore,
    secret: SESSION_SECRET,
    resave: false,
    saveUninitialized: false,
    ...(options.sessionMaxAgeMs === undefined
      ? {}
      : { cookie: { maxAge: options.sessionMaxAgeMs } }),
  });
  const app = express();
  app.use(sessionMiddleware);
  app.use('/platform/callback', login.callback);
  app.post('/logout', login.logout());
  app.post('/destroy', (req, res, next) =>
    req.session.destroy((error) => (error ? next(error) : res.status(204).end())),
  );
  app.use(login.errorHandler());

  const server: Server = createServer(app);
  const sockets = login.sockets({ session: sessionMiddleware });
  const wss = new WebSocketServer({ noServer: true });
  const upgrade = sockets.ws(wss, (ws, player) => {
    ws.send(JSON.stringify({ type: 'hello', openId: player.user.openId }));
    ws.on('message', () => {
      profileOf(player).then(
        (profile) => ws.send(JSON.stringify({ type: 'profile', ...profile })),
        (error: { error?: string }) =>
          ws.send(JSON.stringify({ type: 'error', ...errorOf(error) })),
      );
    });
  });
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname === '/ws') upgrade(req, socket, head);
  });
  const io = new SocketIoServer(server, {
    destroyUpgrade: false,
    connectionStateRecovery: { maxDisconnectionDuration: 60_000 },
  });
  const socketIo = sockets.socketIo();
  io.engine.use(socketIo.engine);
  io.use(socketIo.socket);
  io.on('connection', (socket) => {
    // Read once, as apps do: on a resumed socket it is the login the package gave it.
    const player = socket.data.platformLogin as SocketLogin;
    socket.emit('hello', { openId: player.user.openId });
    socket.on('profile', (ack: (profile: unknown) => void) => {
      profileOf(player).then(ack, (error: { error?: string }) => ack(errorOf(error)));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      io.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await Promise.all([tokenStore.close(), sessionStore.close()]);
    },
  };
}
