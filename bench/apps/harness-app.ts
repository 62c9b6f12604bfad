// The app process the refresh-storm, entry, faults and invalidation sections load, started by
// bench/lib/processes.ts. BENCH_APP picks what sits in front of /api: `baseline` (express +
// express-session + connect-redis only), `package` (this package on RedisTokenStore), `naive`
// (tokens in req.session, apps/hand-written-login.ts) or `server-side` (the entry only: a
// hand-written callback that claims the code once and keeps the tokens in Redis). Also read:
// REDIS_URL (or REDIS_CLUSTER_NODES, `host:port,…`: a Redis Cluster found from these seeds, on
// either client), SIM_URL, KEY_PREFIX, BENCH_LOGIN_OPTIONS, BENCH_STORE_CACHE, BENCH_SESSION_STORE,
// BENCH_TRACE, BENCH_TIME_401, BENCH_REDIS_CLIENT (`node-redis`: node-redis 6 and connect-redis 10
// in place of ioredis and connect-redis 8, for every app kind). Prints "listening <port>" when ready; SIGTERM ends it.
// /bench/refresh-durations and /bench/times-401 report what the process saw. (The request-cost
// section runs apps/serve.ts instead: nothing of this harness in it.)
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import express, { type Express } from 'express';
import session from 'express-session';
import { RedisStore } from 'connect-redis8';
import { RedisStore as RedisStore10 } from 'connect-redis';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { platformLogin, RedisSessionStore, RedisTokenStore } from '../../lib';
import { naiveAccessToken, naiveSessionRefresh, serverSideCallback } from './hand-written-login';
import { BENCH_CLIENT, BENCH_REDIRECT_URI, BENCH_SESSION_SECRET } from '../lib/settings';

const kind = process.env.BENCH_APP;
const prefix = process.env.KEY_PREFIX ?? 'bench:';
const simUrl = process.env.SIM_URL ?? 'http://127.0.0.1:9';
/** REDIS_CLUSTER_NODES as seed addresses; empty: one redis-server at REDIS_URL. */
const clusterNodes = (process.env.REDIS_CLUSTER_NODES ?? '')
  .split(',')
  .filter((node) => node !== '')
  .map((node) => {
    const at = node.lastIndexOf(':');
    return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
  });
const onNodeRedis = process.env.BENCH_REDIS_CLIENT === 'node-redis';
// The client options the package's documentation asks for on the request path; both apps share them.
const ioredisOptions = { maxRetriesPerRequest: 1, commandTimeout: 1000 };
const redis: Redis | Cluster =
  clusterNodes.length === 0
    ? new Redis(process.env.REDIS_URL!, { ...ioredisOptions, lazyConnect: onNodeRedis })
    : new Cluster(clusterNodes, { redisOptions: ioredisOptions, lazyConnect: onNodeRedis });
// node-redis with the options RedisTokenStore documents for it; connected before listening.
const nodeRedisOptions = {
  socket: { connectTimeout: 2000, socketTimeout: 1500 },
  pingInterval: 500,
  disableOfflineQueue: true,
};
const nodeRedis = !onNodeRedis
  ? undefined
  : clusterNodes.length === 0
    ? createClient({ url: process.env.REDIS_URL!, ...nodeRedisOptions })
    : createCluster({
        rootNodes: clusterNodes.map((socket) => ({ socket })),
        defaults: nodeRedisOptions,
      });
nodeRedis?.on('error', () => undefined);
/** The client every store of this process is on. */
const client = nodeRedis ?? redis;

/**
 * BENCH_TIME_401=1: how long each request answered 401 spent in this process, from its arrival to
 * its answer's last byte handed to the socket (ms), read and emptied by /bench/times-401: the part
 * of a round trip the app itself takes, Redis's answers included.
 */
const times401: number[] | undefined = process.env.BENCH_TIME_401 === '1' ? [] : undefined;

/** durationMs of each `refresh` event (package app), read and emptied by /bench/refresh-durations. */
const refreshDurations: number[] = [];
const json = (res: ServerResponse, body: unknown): void => {
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
};
/** Answers /bench/… and resolves true, or resolves false for the app to answer. */
function benchRoute(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.url === '/bench/refresh-durations') {
    // durationMs of the package's `refresh` events since the last ask (the platform call and the
    // write), so a storm's added latency can be set beside the platform's own.
    json(res, refreshDurations.splice(0));
  } else if (req.url === '/bench/times-401' && times401 !== undefined) {
    json(res, times401.splice(0));
  } else return false;
  return true;
}

/** Serves the bench routes, then hands every other request to what `server` already answered with. */
function withBenchRoutes(server: Server): Server {
  const app = server.listeners('request') as ((
    req: IncomingMessage,
    res: ServerResponse,
  ) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (benchRoute(req, res)) return;
    if (times401 !== undefined) {
      const arrived = performance.now();
      res.once('finish', () => {
        if (res.statusCode === 401) times401.push(performance.now() - arrived);
      });
    }
    for (const listener of app) listener.call(server, req, res);
  });
  return server;
}

const app: Express = express();
app.use(
  session({
    // BENCH_SESSION_STORE=memory: the package's RedisSessionStore instead of connect-redis.
    store:
      process.env.BENCH_SESSION_STORE === 'memory'
        ? new RedisSessionStore({ redis: client, prefix: `${prefix}s:` })
        : nodeRedis !== undefined
          ? new RedisStore10({ client: nodeRedis, prefix: `${prefix}s:` })
          : new RedisStore({ client: redis, prefix: `${prefix}s:` }),
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
  const line = (level: string) => (fields: object, message: string) =>
    process.stderr.write(
      `TRACE ${Date.now()} ${process.pid} ${level} ${message} ${JSON.stringify(fields)}\n`,
    );
  const traceLogger = {
    debug: (fields: { event?: string }, message: string) => {
      if (fields.event === 'tokenEndpoint') line('debug')(fields, message);
    },
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
  };
  // Records in the clear, as measured (NODE_ENV=production asks for that choice to be explicit).
  const tokenStore = new RedisTokenStore({
    redis: client,
    prefix: `${prefix}t:`,
    allowPlaintextTokens: true,
    recordCache,
  });
  const login = platformLogin({
    authUrl: simUrl,
    ...BENCH_CLIENT,
    redirectUri: BENCH_REDIRECT_URI,
    // Entries are checked against the simulator's lobby, as the quick start does with the platform's.
    platformOrigins: [new URL(simUrl).origin],
    store: tokenStore,
    ...(process.env.BENCH_TRACE === '1' ? { logger: traceLogger } : {}),
    // BENCH_LOGIN_OPTIONS: JSON of extra options (load-with-faults: a short refresh skew).
    ...(JSON.parse(process.env.BENCH_LOGIN_OPTIONS ?? '{}') as object),
  });
  app.use('/platform/callback', login.callback);
  app.use('/api', login.middleware());
  login.on('refresh', (event) => refreshDurations.push(event.durationMs));
  if (process.env.BENCH_TRACE === '1') {
    const trace = (name: string) => (event: object) =>
      process.stderr.write(`TRACE ${Date.now()} ${process.pid} ${name} ${JSON.stringify(event)}\n`);
    login.on('refresh', trace('refresh'));
    login.on('refreshFailed', trace('refreshFailed'));
  }
  app.get('/api/me', (req, res) => {
    res.json(req.platformUser);
  });
  app.get('/api/token', async (req, res, next) => {
    try {
      res.json({ accessToken: await req.platformToken() });
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
} else if (kind === 'server-side') {
  // The entry only (section "entry"): a hand-written callback doing the package's core jobs.
  app.get(
    '/platform/callback',
    serverSideCallback({
      authUrl: simUrl,
      ...BENCH_CLIENT,
      redirectUri: BENCH_REDIRECT_URI,
      refreshSkewMs: 60_000,
      claimOnce: (key, ttlMs) =>
        nodeRedis === undefined
          ? redis.set(key, '1', 'PX', ttlMs, 'NX').then((ok) => ok !== null)
          : nodeRedis.set(key, '1', { PX: ttlMs, NX: true }).then((ok) => ok !== null),
      setWithTtl: (key, value, ttlMs) =>
        (nodeRedis === undefined
          ? redis.set(key, value, 'PX', ttlMs)
          : nodeRedis.set(key, value, { PX: ttlMs })
        ).then(() => undefined),
      prefix: `${prefix}h:`,
      tokenTtlMs: 86_400_000,
    }),
  );
} else {
  throw new TypeError('BENCH_APP must be "baseline", "package", "naive" or "server-side".');
}

async function listen(): Promise<Server> {
  await nodeRedis?.connect();
  const server = withBenchRoutes(createServer(app));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

void listen().then((server) => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
  // The load generator keeps its connections open between rounds; the default 5 s would close them.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close();
  });
});

process.on('SIGTERM', () => {
  redis.disconnect();
  nodeRedis?.destroy();
  // Anything still holding the loop open must not keep a finished benchmark waiting.
  setTimeout(() => process.exit(0), 2000).unref();
});
