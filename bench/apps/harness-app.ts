// The app process the refresh-storm, entry, faults and invalidation sections load. BENCH_APP picks
// what sits in front of /api: `baseline` (the session stack only), `package`, `naive` (tokens in
// req.session, apps/hand-written-login.ts) or `server-side` (a hand-written entry doing the core
// jobs). Also read: REDIS_URL or REDIS_CLUSTER_NODES (`host:port,…`), SIM_URL, KEY_PREFIX,
// BENCH_LOGIN_OPTIONS (JSON of more platformLogin() options), BENCH_STORE_CACHE=0, BENCH_TIME_401=1
// (times each 401 for /bench/times-401), BENCH_SESSION_STORE=memory (RedisSessionStore),
// BENCH_REDIS_CLIENT=node-redis. Prints "listening <port>"; SIGTERM ends it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { RedisStore } from 'connect-redis8';
import { RedisStore as RedisStore10 } from 'connect-redis';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { platformLogin, RedisSessionStore, RedisTokenStore } from '../../lib';
import { naiveSessionRefresh, serverSideCallback } from './hand-written-login';
import { BENCH_CLIENT, BENCH_REDIRECT_URI, benchLogin } from '../lib/settings';
import { serve, sessionStackApp } from './session-stack';

const env = process.env;
const kind = env.BENCH_APP;
const prefix = env.KEY_PREFIX ?? 'bench:';
const simUrl = env.SIM_URL ?? 'http://127.0.0.1:9';
/** REDIS_CLUSTER_NODES as URLs, which both clients parse. */
const clusterNodes = (env.REDIS_CLUSTER_NODES ?? '')
  .split(',')
  .flatMap((node) => (node === '' ? [] : [`redis://${node}`]));
const onNodeRedis = env.BENCH_REDIS_CLIENT === 'node-redis';
// The client options the package's documentation asks for on the request path.
const ioredisOptions = { maxRetriesPerRequest: 1, commandTimeout: 1000 };
const redis: Redis | Cluster =
  clusterNodes.length === 0
    ? new Redis(env.REDIS_URL!, { ...ioredisOptions, lazyConnect: onNodeRedis })
    : new Cluster(clusterNodes, { redisOptions: ioredisOptions, lazyConnect: onNodeRedis });
const nodeRedisOptions = {
  socket: { connectTimeout: 2000, socketTimeout: 1500 },
  pingInterval: 500,
  disableOfflineQueue: true,
};
const nodeRedis = !onNodeRedis
  ? undefined
  : clusterNodes.length === 0
    ? createClient({ url: env.REDIS_URL!, ...nodeRedisOptions })
    : createCluster({
        rootNodes: clusterNodes.map((url) => ({ url })),
        defaults: nodeRedisOptions,
      });
nodeRedis?.on('error', () => undefined);
const client = nodeRedis ?? redis;

/** Each 401's time in this process, arrival to answer (ms): the part of a round trip the app takes. */
const times401: number[] | undefined = env.BENCH_TIME_401 === '1' ? [] : undefined;
/** durationMs of each `refresh` event: a storm's added latency beside the platform's own. */
const refreshDurations: number[] = [];

const sessionPrefix = `${prefix}s:`;
const app = sessionStackApp(
  env.BENCH_SESSION_STORE === 'memory'
    ? new RedisSessionStore({ redis: client, prefix: sessionPrefix })
    : nodeRedis !== undefined
      ? new RedisStore10({ client: nodeRedis, prefix: sessionPrefix })
      : new RedisStore({ client: redis, prefix: sessionPrefix }),
);
const settings = { authUrl: simUrl, ...BENCH_CLIENT, redirectUri: BENCH_REDIRECT_URI };

if (kind === 'baseline') {
  // What a login leaves in the session, sized like the package's marker ({ openId, entry }).
  app.get('/login', (req, res, next) =>
    req.session.regenerate((err: unknown) => {
      if (err) return next(err);
      const user = { openId: String(req.query.openId), entry: 'AAAAAAAAAAAAAAAAAAAAAA' };
      (req.session as unknown as { user: object }).user = user;
      res.status(204).end();
    }),
  );
  // The same JSON shape and size as the package's req.platformUser, so both routes send alike.
  const scope = ['user_info', 'basic_actions'];
  const tokenExpiresAt = Date.now() + 7_200_000;
  app.get('/api/me', (req, res) => {
    const user = (req.session as unknown as { user?: { openId: string } }).user;
    if (user === undefined) return void res.status(401).json({ error: 'login_required' });
    const { openId } = user;
    res.json({ openId, scope, tokenExpiresAt, unionId: openId.replace('player-', 'union-') });
  });
} else if (kind === 'package') {
  const login = platformLogin({
    ...benchLogin(simUrl),
    // Records in the clear, as measured (NODE_ENV=production asks for that choice to be explicit).
    store: new RedisTokenStore({
      redis: client,
      prefix: `${prefix}t:`,
      allowPlaintextTokens: true,
      recordCache: env.BENCH_STORE_CACHE !== '0',
    }),
    ...(JSON.parse(env.BENCH_LOGIN_OPTIONS ?? '{}') as object),
  });
  app.use('/platform/callback', login.callback);
  app.use('/api', login.middleware());
  login.on('refresh', (event) => refreshDurations.push(event.durationMs));
  app.get('/api/me', (req, res) => void res.json(req.platformUser));
  // Express 5 hands a rejected handler's error to the error handler.
  app.get(
    '/api/token',
    async (req, res) => void res.json({ accessToken: await req.platformToken() }),
  );
  app.use(login.errorHandler());
} else if (kind === 'naive') {
  const naive = naiveSessionRefresh({ ...settings, refreshSkewMs: 60_000 });
  app.get('/platform/callback', naive.callback);
  app.use('/api', naive.middleware);
  app.get('/api/token', (_req, res) => void res.json({ accessToken: res.locals.accessToken }));
} else if (kind === 'server-side') {
  // The entry only (section "entry"): a hand-written callback doing the package's core jobs.
  const set = async (key: string, value: string, ttlMs: number, nx: boolean): Promise<boolean> =>
    (nodeRedis !== undefined
      ? await nodeRedis.set(key, value, { PX: ttlMs, ...(nx ? { NX: true as const } : {}) })
      : nx
        ? await redis.set(key, value, 'PX', ttlMs, 'NX')
        : await redis.set(key, value, 'PX', ttlMs)) !== null;
  const callback = serverSideCallback({
    ...{ ...settings, refreshSkewMs: 60_000, set },
    ...{ prefix: `${prefix}h:`, tokenTtlMs: 86_400_000 },
  });
  app.get('/platform/callback', callback);
} else {
  throw new TypeError('BENCH_APP must be "baseline", "package", "naive" or "server-side".');
}

/** /bench/… answered here; every other request goes to the app (timed when it answers 401). */
function handle(req: IncomingMessage, res: ServerResponse): void {
  const report = (values: number[]): void => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(values.splice(0)));
  };
  if (req.url === '/bench/refresh-durations') return report(refreshDurations);
  if (req.url === '/bench/times-401' && times401 !== undefined) return report(times401);
  if (times401 !== undefined) {
    const arrived = performance.now();
    res.once('finish', () => {
      if (res.statusCode === 401) times401.push(performance.now() - arrived);
    });
  }
  app(req, res);
}

void (async () => {
  await nodeRedis?.connect();
  serve(handle, () => {
    redis.disconnect();
    nodeRedis?.destroy();
  });
})();
