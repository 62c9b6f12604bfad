// One request-cost app process: the session stack as the floor (floor.js) has it, plus the package:
// BENCH_APP=package, package-sessions (on RedisSessionStore) or package-without-middleware (the
// route answering from the session's marker: the middleware's own cost is the difference);
// BENCH_CLIENT=ioredis|node-redis, REDIS_URL, SIM_URL. Prints "listening <port>"; SIGTERM ends it.
import { platformLogin, RedisSessionStore, RedisTokenStore } from '../../lib';
import { benchLogin } from '../lib/settings';
import { CLIENT_CHOICES, connectRedis, serve, sessionStackApp } from './session-stack';
import type { ClientChoice } from './session-stack';

async function main(): Promise<void> {
  const choice = (process.env.BENCH_CLIENT ?? 'ioredis') as ClientChoice;
  const kind = process.env.BENCH_APP;
  if (!CLIENT_CHOICES.includes(choice)) throw new TypeError(`BENCH_CLIENT: ${choice}`);
  if (kind !== 'package' && kind !== 'package-sessions' && kind !== 'package-without-middleware')
    throw new TypeError('BENCH_APP: package, package-sessions or package-without-middleware');
  const redis = await connectRedis(choice, process.env.REDIS_URL!);
  const login = platformLogin({
    ...benchLogin(process.env.SIM_URL!),
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
      : redis.sessionStore(),
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
  serve(app, () => redis.close());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
