// One game backend process under load, started by bench/lib/processes.ts with
// `node -r esbuild-register`. BENCH_APP picks what sits in front of /api: `baseline` (express +
// express-session + connect-redis only), `package` (this package on RedisTokenStore), `example`
// (the example app as `npm run example` starts it, on Redis) or `naive` (tokens in req.session,
// bench/naive-session-refresh.ts). Also read: REDIS_URL, SIM_URL, KEY_PREFIX, BENCH_AUTO_PIPELINING,
// BENCH_RECORD_CACHE (diagnostic, see cached-store.ts), BENCH_LOGIN_OPTIONS, BENCH_TRACE,
// BENCH_TIME_401. Prints
// "listening <port>" when ready; SIGTERM ends it. /bench/cpu tells the CPU time used so far;
// /bench/profile/start and /bench/profile/stop run V8's CPU profiler (the one behind --cpu-prof)
// over a measured window only; /bench/loop-delay tells the event-loop delay.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Session as InspectorSession } from 'node:inspector/promises';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import express, { type Express } from 'express';
import session from 'express-session';
import { RedisStore } from 'connect-redis8';
import { Redis } from 'ioredis';
import { platformLogin, RedisTokenStore } from '../../lib';
import { readConfig } from '../../example-app/config';
import { startExample } from '../../example-app/start';
import { naiveAccessToken, naiveSessionRefresh } from '../naive-session-refresh';
import { BENCH_CLIENT, BENCH_REDIRECT_URI, BENCH_SESSION_SECRET } from './bench-settings';
import { ReadCachingStore } from './cached-store';
import { floor } from './floor';

const kind = process.env.BENCH_APP;
const prefix = process.env.KEY_PREFIX ?? 'bench:';
const simUrl = process.env.SIM_URL ?? 'http://127.0.0.1:9';
// The client options the package's documentation asks for on the request path; both apps share them.
const redis = new Redis(process.env.REDIS_URL!, {
  maxRetriesPerRequest: 1,
  commandTimeout: 1000,
  enableAutoPipelining: process.env.BENCH_AUTO_PIPELINING === '1',
});

// The benchmark's own routes answer before any app code runs, so they are not part of what is measured.
const profiler = new InspectorSession();
profiler.connect();
/**
 * BENCH_TIME_OWN=1 (package app): the package's own work per request, timed where it runs:
 * login.middleware() from its call to its next(), and the handler's read of req.platformUser;
 * the cost of one clock read is measured beside them, to subtract. Read by /bench/own-time.
 */
interface OwnTime {
  requests: number;
  middlewareNs: bigint;
  userNs: bigint;
  clockNs: bigint;
}
const ownTime: OwnTime | undefined =
  process.env.BENCH_TIME_OWN === '1'
    ? { requests: 0, middlewareNs: 0n, userNs: 0n, clockNs: 0n }
    : undefined;

/** `middleware` with the time from its call to its next() added to `time`. */
function timed(middleware: express.RequestHandler, time: OwnTime): express.RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    void middleware(req, res, (error?: unknown) => {
      const passed = process.hrtime.bigint();
      time.middlewareNs += passed - started;
      time.clockNs += process.hrtime.bigint() - passed;
      next(error);
    });
  };
}

/**
 * BENCH_TIME_401=1: how long each request answered 401 spent in this process, from its arrival to
 * its answer's last byte handed to the socket (ms), read and emptied by /bench/times-401: the part
 * of a round trip the app itself takes, Redis's answers included.
 */
const times401: number[] | undefined = process.env.BENCH_TIME_401 === '1' ? [] : undefined;

/** durationMs of each `refresh` event (package app), read and emptied by /bench/refresh-durations. */
const refreshDurations: number[] = [];
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const json = (res: ServerResponse, body: unknown): void => {
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
};
/** Answers /bench/… and resolves true, or resolves false for the app to answer. */
function benchRoute(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.url === '/bench/profile/start') {
    void (async () => {
      await profiler.post('Profiler.enable');
      // 100 µs instead of the default 1 ms: ten times the samples, so a few µs per request is
      // counted from hundreds of samples rather than tens.
      await profiler.post('Profiler.setSamplingInterval', {
        interval: Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 100),
      });
      await profiler.post('Profiler.start');
      res.statusCode = 204;
      res.end();
    })();
  } else if (req.url === '/bench/profile/stop') {
    void profiler.post('Profiler.stop').then(({ profile }) => json(res, profile));
  } else if (req.url === '/bench/cpu') {
    // CPU time this process has used so far (µs, user + system): read around a window, ÷ requests.
    const { user, system } = process.cpuUsage();
    json(res, { us: user + system });
  } else if (req.url === '/bench/refresh-durations') {
    // durationMs of the package's `refresh` events since the last ask (the platform call and the
    // write), so a storm's added latency can be set beside the platform's own.
    json(res, refreshDurations.splice(0));
  } else if (req.url === '/bench/own-time' && ownTime !== undefined) {
    // Mean ns per request since the last ask, each less one clock read; then starts again.
    const per = (ns: bigint): number =>
      Number(ns - ownTime.clockNs) / Math.max(1, ownTime.requests);
    json(res, {
      requests: ownTime.requests,
      middlewareNs: per(ownTime.middlewareNs),
      userNs: per(ownTime.userNs),
      clockNs: Number(ownTime.clockNs) / Math.max(1, ownTime.requests),
    });
    Object.assign(ownTime, { requests: 0, middlewareNs: 0n, userNs: 0n, clockNs: 0n });
  } else if (req.url === '/bench/times-401' && times401 !== undefined) {
    json(res, times401.splice(0));
  } else if (req.url === '/bench/loop-delay') {
    // Event-loop delay of this process, to tell a slow app from a slow load generator.
    json(res, { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 });
    loopDelay.reset();
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
    redis,
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
    store: process.env.BENCH_RECORD_CACHE === '1' ? new ReadCachingStore(tokenStore) : tokenStore,
    ...(process.env.BENCH_TRACE === '1' ? { logger: traceLogger } : {}),
    // BENCH_LOGIN_OPTIONS: JSON of extra options (load-with-faults: a short refresh skew).
    ...(JSON.parse(process.env.BENCH_LOGIN_OPTIONS ?? '{}') as object),
  });
  app.use('/platform/callback', login.callback);
  const hand = process.env.BENCH_FLOOR === '1' ? floor(tokenStore) : undefined;
  const middleware = hand ?? login.middleware();
  app.use('/api', ownTime === undefined ? middleware : timed(middleware, ownTime));
  login.on('refresh', (event) => refreshDurations.push(event.durationMs));
  if (process.env.BENCH_TRACE === '1') {
    const trace = (name: string) => (event: object) =>
      process.stderr.write(`TRACE ${Date.now()} ${process.pid} ${name} ${JSON.stringify(event)}\n`);
    login.on('refresh', trace('refresh'));
    login.on('refreshFailed', trace('refreshFailed'));
  }
  app.get('/api/me', (req, res) => {
    if (ownTime === undefined) {
      res.json(req.platformUser);
      return;
    }
    const started = process.hrtime.bigint();
    const user =
      hand === undefined ? req.platformUser : (req as unknown as { floorUser: object }).floorUser;
    ownTime.userNs += process.hrtime.bigint() - started;
    ownTime.requests += 1;
    res.json(user);
  });
  app.get('/api/token', async (req, res, next) => {
    try {
      res.json({ accessToken: await req.platformToken() });
    } catch (error) {
      next(error);
    }
  });
  app.use(login.errorHandler());
} else if (kind === 'example') {
  // Built by the example's own start-up below, as `npm run example` runs it.
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
  throw new TypeError('BENCH_APP must be "baseline", "package", "example" or "naive".');
}

/** The example as `npm run example` starts it: its own Redis client, stores, metrics and routes. */
async function startExampleServer(): Promise<Server> {
  const running = await startExample(
    readConfig({
      PORT: '0',
      REDIS_URL: process.env.REDIS_URL,
      PLATFORM_AUTH_URL: simUrl,
      PLATFORM_CLIENT_ID: BENCH_CLIENT.clientId,
      PLATFORM_CLIENT_SECRET: BENCH_CLIENT.clientSecret,
      PLATFORM_REDIRECT_URI: BENCH_REDIRECT_URI,
      PLATFORM_ORIGINS: new URL(simUrl).origin,
      SESSION_SECRET: BENCH_SESSION_SECRET,
      // As a studio runs it in production: tokens encrypted at rest (the example refuses Redis
      // without a key under NODE_ENV=production). Hits are served decrypted from the record cache.
      // One key per benchmark run (processes.ts), shared by its example processes.
      TOKEN_ENCRYPTION_KEY: process.env.BENCH_TOKEN_KEY ?? randomBytes(32).toString('base64'),
    }),
  );
  return running.server;
}

async function listen(): Promise<Server> {
  if (kind === 'example') return withBenchRoutes(await startExampleServer());
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
  profiler.disconnect();
  // Anything still holding the loop open must not keep a finished benchmark waiting.
  setTimeout(() => process.exit(0), 2000).unref();
});
