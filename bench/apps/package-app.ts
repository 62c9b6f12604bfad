// The session stack as the floor (floor.js) has it plus this package: the same client defaults,
// `login.middleware()` on a RedisTokenStore (records in the clear, served from the record cache as
// by default), and the route answering `req.platformUser`. What the package costs on top of the
// floor is the difference. (This process runs TypeScript through esbuild-register, the floor plain
// JavaScript: the same app in plain JavaScript measured no cheaper, 100.6 against 97.8 µs.)
import type { Express } from 'express';
import type session from 'express-session';
import { platformLogin, RedisTokenStore, type PlatformLogin } from '../../lib';
import { BENCH_CLIENT, BENCH_REDIRECT_URI } from '../lib/settings';
import { sessionStackApp, sessionStoreOn, type BenchRedis } from './session-stack';

export interface PackageApp {
  app: Express;
  login: PlatformLogin;
  tokenStore: RedisTokenStore;
}

/**
 * `simUrl`: the platform simulator the callback exchanges codes at. `sessionStore`: express-session's
 * store; connect-redis (as the floor's) unless given (the package's RedisSessionStore).
 * `middleware: false`: everything but `login.middleware()`, the route answering from the session's
 * marker as the floor answers from its session: what the middleware itself costs is the difference.
 */
export function packageApp(
  redis: BenchRedis,
  simUrl: string,
  sessionStore: session.Store = sessionStoreOn(redis),
  middleware = true,
): PackageApp {
  // RedisTokenStore takes node-redis once the client seam lands (DESIGN.md section 10).
  const tokenStore = new RedisTokenStore({
    redis: redis.client,
    prefix: 'bench:tokens:',
    allowPlaintextTokens: true,
  });
  const login = platformLogin({
    authUrl: simUrl,
    ...BENCH_CLIENT,
    redirectUri: BENCH_REDIRECT_URI,
    platformOrigins: [new URL(simUrl).origin],
    store: tokenStore,
  });
  const app = sessionStackApp(sessionStore);
  app.use('/platform/callback', login.callback);
  if (middleware) {
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
  return { app, login, tokenStore };
}
