// One game backend process under load, started by bench/lib/processes.ts with
// `node -r esbuild-register`. BENCH_APP picks what sits in front of /api: `baseline` (express +
// express-session + connect-redis only), `package` (this package on RedisTokenStore) or `naive`
// (tokens in req.session, bench/naive-session-refresh.ts). Also read: REDIS_URL, SIM_URL,
// KEY_PREFIX, BENCH_AUTO_PIPELINING, BENCH_RECORD_CACHE (diagnostic, see cached-store.ts). Prints "listening <port>" when ready; SIGTERM ends it. /bench/profile/start and
// /bench/profile/stop run V8's CPU profiler (the one behind --cpu-prof) over a measured window only.
import { Session as InspectorSession } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import express, { type Express } from 'express';
import session from 'express-session';
import { RedisStore } from 'connect-redis';
import { Redis } from 'ioredis';
import { platformLogin, RedisTokenStore } from '../../lib';
import { naiveAccessToken, naiveSessionRefresh } from '../naive-session-refresh';
import { BENCH_CLIENT, BENCH_REDIRECT_URI, BENCH_SESSION_SECRET } from './bench-settings';
import { ReadCachingStore } from './cached-store';

const kind = process.env.BENCH_APP;
const prefix = process.env.KEY_PREFIX ?? 'bench:';
const simUrl = process.env.SIM_URL ?? 'http://127.0.0.1:9';
// The client options the package's documentation asks for on the request path; both apps share them.
const redis = new Redis(process.env.REDIS_URL!, {
  maxRetriesPerRequest: 1,
  commandTimeout: 1000,
  enableAutoPipelining: process.env.BENCH_AUTO_PIPELINING === '1',
});

const app: Express = express();
// Mounted before the session so they are not part of what is measured.
const profiler = new InspectorSession();
profiler.connect();
app.get('/bench/profile/start', async (_req, res) => {
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
  res.status(204).end();
});
app.get('/bench/profile/stop', async (_req, res) => {
  const { profile } = await profiler.post('Profiler.stop');
  res.json(profile);
});
// Event-loop delay of this process, to tell a slow app from a slow load generator.
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
app.get('/bench/loop-delay', (_req, res) => {
  res.json({ p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 });
  loopDelay.reset();
});
app.use(
  session({
    store: new RedisStore({ client: redis, prefix: `${prefix}s:` }),
    secret: BENCH_SESSION_SECRET,
    resave: false,
    saveUninitialized: false,
  }),
);

if (kind === 'baseline') {
  // What a login leaves in the session, sized like the package's marker ({ openId, entry }).
  app.get('/login', (req, res, next) => {
    req.session.regenerate((err: unknown) => {
      if (err) return next(err);
      (req.session as unknown as { user: object }).user = {
        openId: String(req.query.openId),
        entry: 'AAAAAAAAAAAAAAAAAAAAAA',
      };
      res.status(204).end();
    });
  });
  app.use('/api', (req, res, next) => {
    const user = (req.session as unknown as { user?: { openId: string } }).user;
    if (user === undefined) res.status(401).json({ error: 'login_required' });
    else next();
  });
  // The same JSON shape and size as the package's req.platformUser, so both routes send alike.
  const scope = ['user_info', 'basic_actions'];
  const tokenExpiresAt = Date.now() + 7_200_000;
  app.get('/api/me', (req, res) => {
    const { openId } = (req.session as unknown as { user: { openId: string } }).user;
    res.json({ openId, scope, tokenExpiresAt, unionId: openId.replace('player-', 'union-') });
  });
} else if (kind === 'package') {
  // BENCH_STORE_CACHE=0: every record read from Redis (RedisTokenStore's `recordCache: false`).
  const recordCache = process.env.BENCH_STORE_CACHE !== '0';
  const login = platformLogin({
    authUrl: simUrl,
    ...BENCH_CLIENT,
    redirectUri: BENCH_REDIRECT_URI,
    store:
      process.env.BENCH_RECORD_CACHE === '1'
        ? new ReadCachingStore(new RedisTokenStore({ redis, prefix: `${prefix}t:`, recordCache }))
        : new RedisTokenStore({ redis, prefix: `${prefix}t:`, recordCache }),
  });
  app.use('/platform/callback', login.callback);
  app.use('/api', login.middleware());
  app.get('/api/me', (req, res) => {
    res.json(req.platformUser);
  });
  app.get('/api/token', async (req, res, next) => {
    try {
      res.json({ accessToken: await req.platformToken!() });
    } catch (error) {
      next(error);
    }
  });
  app.use(login.errorHandler());
} else if (kind === 'naive') {
  const naive = naiveSessionRefresh({
    authUrl: simUrl,
    ...BENCH_CLIENT,
    redirectUri: BENCH_REDIRECT_URI,
    refreshSkewMs: 60_000,
  });
  app.get('/platform/callback', naive.callback);
  app.use('/api', naive.middleware);
  app.get('/api/token', (req, res) => {
    res.json({ accessToken: naiveAccessToken(req) });
  });
} else {
  throw new TypeError('BENCH_APP must be "baseline", "package" or "naive".');
}

const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
// The load generator keeps its connections open between rounds; the default 5 s would close them.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 121_000;

process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
  redis.disconnect();
  profiler.disconnect();
  // Anything still holding the loop open must not keep a finished benchmark waiting.
  setTimeout(() => process.exit(0), 2000).unref();
});
