// A game backend process for multi-process tests: express-session on connect-redis and the package
// on RedisTokenStore, both on the shared Redis. Started on the sources (on-sources.ts); prints
// "listening <port>" when ready. Configured by environment: REDIS_URL, SIM_URL, KEY_PREFIX, and
// for the fault tests LOGIN_OPTIONS, REDIS_FAIL_FAST and KILL_BEFORE_REFRESH_WRITE (see below).
// EPL_TEST_REDIS_CLIENT (a client kind's name; the suites that spawn this leave it unset, and the
// `node-redis` projects no longer run them): node-redis for both the token store and the session
// store (connect-redis 10), instead of ioredis (connect-redis 8.1), for a run by hand.
import session from 'express-session';
import { RedisStore as RedisStore8 } from 'connect-redis8';
import { RedisStore } from 'connect-redis';
import { Redis } from 'ioredis';
import { createClient as createClient6 } from 'redis';
import { createClient as createClient5 } from 'redis5';
import { platformLogin, RedisTokenStore } from '../../lib';
import { createRedisClient } from '../../example-app/redis-client';
import { entryApp } from './test-app';
import { engineOf } from '../../lib/core/derived-engine';

// REDIS_FAIL_FAST=1: the client the README recommends (command timeout, reconnect forever), so a
// stalled or restarted Redis fails requests quickly and the process recovers by itself.
const failFast = process.env.REDIS_FAIL_FAST === '1';
const prefix = process.env.KEY_PREFIX ?? 'mp:';
const clientKind = process.env.EPL_TEST_REDIS_CLIENT ?? 'ioredis';

/** The Redis client of this process and the express-session store on it. */
function redisAndSessions(): {
  redis: Redis | ReturnType<typeof createClient6>;
  sessions: session.Store;
  ready: Promise<unknown>;
  end: () => void;
} {
  if (clientKind.startsWith('node-redis')) {
    const create = (clientKind.startsWith('node-redis 5') ? createClient5 : createClient6) as (
      options: unknown,
    ) => ReturnType<typeof createClient6>;
    const client = create({
      url: process.env.REDIS_URL!,
      RESP: clientKind.includes('RESP3') ? 3 : 2,
      ...(failFast
        ? {
            // node-redis's `commandOptions.timeout` stops only a command not yet written: a stalled
            // server is noticed by the socket's inactivity timeout (pings keep an idle one busy),
            // which fails what is waiting; the token store's own deadline bounds its calls anyway.
            socket: {
              connectTimeout: 2000,
              socketTimeout: 1500,
              reconnectStrategy: (n: number) => Math.min(n * 50, 500),
            },
            pingInterval: 500,
            // While reconnecting, commands fail at once (503) instead of waiting in a queue.
            disableOfflineQueue: true,
          }
        : {}),
    });
    // node-redis reports every failed reconnect as an `error` event; requests answer 503 meanwhile.
    client.on('error', () => undefined);
    return {
      redis: client,
      sessions: new RedisStore({ client, prefix: `${prefix}s:` }),
      ready: client.connect(),
      end: () => client.destroy(),
    };
  }
  const client = failFast
    ? createRedisClient(process.env.REDIS_URL!)
    : new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  // ioredis reports every failed reconnect as an `error` event; requests already answer 503 meanwhile.
  if (failFast) client.on('error', () => undefined);
  return {
    redis: client,
    sessions: new RedisStore8({ client, prefix: `${prefix}s:` }),
    ready: Promise.resolve(),
    end: () => client.disconnect(),
  };
}

const { redis, sessions, ready, end } = redisAndSessions();
// connect-redis keeps sessions on this client: a new login waits for a replica to hold its session too.
const tokenStore = new RedisTokenStore({
  redis,
  prefix: `${prefix}t:`,
  sessions: { client: redis, prefix: `${prefix}s:` },
});
// KILL_BEFORE_REFRESH_WRITE=1: the process dies (SIGKILL) after the platform answered a refresh and
// before the new record is written. A refresh writes over a version; a login writes with null.
if (process.env.KILL_BEFORE_REFRESH_WRITE === '1') {
  const records = engineOf(tokenStore).records;
  const put = records.put.bind(records);
  records.put = (sessionKey, record, options) => {
    if (options.expectedVersion !== null) process.kill(process.pid, 'SIGKILL');
    return put(sessionKey, record, options);
  };
}
// LOGIN_OPTIONS: JSON of extra platformLogin() options, e.g. a short token client timeout.
const extraOptions = JSON.parse(process.env.LOGIN_OPTIONS ?? '{}') as Record<string, unknown>;
const login = platformLogin({
  authUrl: process.env.SIM_URL!,
  clientId: 'demo-game',
  clientSecret: 'demo-secret',
  redirectUri: 'http://127.0.0.1:3999/platform/callback',
  store: tokenStore,
  // The simulator's lobby opens the game; the tests enter without browser headers (as test-app.ts).
  platformOrigins: [new URL(process.env.SIM_URL!).origin],
  // The refusals and 5xx the tests cause on purpose would print on the test run's output.
  logger: {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
  },
  ...extraOptions,
  entry: { context: { allowMissingHeaders: true }, ...(extraOptions.entry as object | undefined) },
});
let refreshes = 0;
let reauths = 0;
login.on('refresh', () => (refreshes += 1));
login.on('refreshFailed', (event) => {
  if (event.code === 'ERR_PLATFORM_INVALID_GRANT' || event.code === 'ERR_PLATFORM_REAUTH_REQUIRED')
    reauths += 1;
});

// One secret for all processes, so a cookie works on any of them.
const app = entryApp(login, {
  store: sessions,
  secret: 'a-shared-session-secret-for-all-processes',
});
app.use('/api', login.middleware());
app.get('/api/token', async (req, res, next) => {
  try {
    res.json({ accessToken: await req.platformToken(), pid: process.pid });
  } catch (error) {
    next(error);
  }
});
app.get('/stats', (_req, res) => {
  res.json({ refreshes, reauths });
});
// Also answers a Redis outage seen by express-session (connect-redis) as 503 store_unavailable.
app.use(login.errorHandler());

void ready.then(() => {
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(
      `listening ${typeof address === 'object' && address ? address.port : 0}\n`,
    );
  });
  process.on('SIGTERM', () => {
    server.close();
    end();
  });
});
