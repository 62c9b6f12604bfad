// One request-cost app process: the session stack as the floor (floor.js) has it, plus the package:
// BENCH_APP=package, package-sessions (on RedisSessionStore) or package-without-middleware (the
// route answering from the session's marker: the middleware's own cost is the difference);
// BENCH_CLIENT=ioredis|node-redis, REDIS_URL, SIM_URL. Prints "listening <port>"; SIGTERM ends it.
import { createServer } from 'node:http';
import { platformLogin, RedisSessionStore, RedisTokenStore } from '../../lib';
import { BENCH_CLIENT, BENCH_REDIRECT_URI } from '../lib/settings';
import {
  CLIENT_CHOICES,
  connectRedis,
  sessionStackApp,
  sessionStoreOn,
  type ClientChoice,
} from './session-stack';

async function main(): Promise<void> {
  const choice = (process.env.BENCH_CLIENT ?? 'ioredis') as ClientChoice;
  const kind = process.env.BENCH_APP;
  const simUrl = process.env.SIM_URL!;
  if (!CLIENT_CHOICES.includes(choice)) throw new TypeError(`BENCH_CLIENT: ${choice}`);
  if (kind !== 'package' && kind !== 'package-sessions' && kind !== 'package-without-middleware')
    throw new TypeError('BENCH_APP: package, package-sessions or package-without-middleware');
  const redis = await connectRedis(choice, process.env.REDIS_URL!);
  const login = platformLogin({
    authUrl: simUrl,
    ...BENCH_CLIENT,
    redirectUri: BENCH_REDIRECT_URI,
    platformOrigins: [new URL(simUrl).origin],
    store: new RedisTokenStore({
      redis: redis.client,
      prefix: 'bench:tokens:',
      allowPlaintextTokens: true,
    }),
  });
  // A prefix of its own: RedisSessionStore hears every write under its prefix (broadcast
  // tracking), and connect-redis's `sess:` is written on every request of the other windows.
  const app = sessionStackApp(
    kind === 'package-sessions'
      ? new RedisSessionStore({ redis: redis.client, prefix: 'bench:sessions:' })
      : sessionStoreOn(redis),
  );
  app.use('/platform/callback', login.callback);
  if (kind !== 'package-without-middleware') {
    app.use('/api', login.middleware());
    app.get('/api/me', (req, res) => {
      const { openId, unionId, scope } = req.platformUser!;
      res.json({ openId, unionId: unionId ?? null, scope });
    });
  } else {
    app.get('/api/me', (req, res) => {
      const marker = req.session.platformLogin;
      if (marker === undefined) return void res.status(401).json({ error: 'login_required' });
      res.json({ openId: marker.openId, unionId: null, scope: ['user_info'] });
    });
  }
  app.use(login.errorHandler());
  const server = createServer(app);
  // The load generator keeps its connections open between windows.
  server.keepAliveTimeout = 120_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(
      `listening ${typeof address === 'object' && address ? address.port : 0}\n`,
    );
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close();
    void redis.close();
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
