// Starts the example on its configuration: the embedded simulator when no platform is configured,
// Redis stores when REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES is set (on node-redis, or on
// ioredis with REDIS_CLIENT=ioredis), memory stores otherwise. Used by server.ts and by the tests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import {
  checkSetup,
  MemoryTokenStore,
  RedisSessionStore,
  RedisTokenStore,
  platformLogin,
  type PlatformLogger,
  type PlatformLogin,
  type TokenStore,
} from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { createExampleApp, SESSION_MIDDLEWARE } from './app';
import { attachGameSocket } from './game-socket';
import type { ExampleConfig } from './config';
import {
  COMMAND_TIMEOUT_MS,
  FIRST_CONNECTION_WAIT_MS,
  connectExampleRedis,
  type ExampleRedis,
} from './redis-client';
import { createExampleMetrics } from './metrics';

/** The example, running. */
export interface RunningExample {
  /** The URL to open. */
  url: string;
  /** The redirect_uri registered with the platform and sent to its token endpoint. */
  redirectUri: string;
  server: Server;
  login: PlatformLogin;
  /** The embedded simulator, when no platform URL was configured. */
  simulator: PlatformSimulator | undefined;
  /** The Redis client (REDIS_CLIENT's kind) when REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES is set. */
  redis: ExampleRedis | undefined;
  /** Stops accepting, lets requests in flight finish, then closes Redis and the simulator. */
  close(): Promise<void>;
}

const MAKE_A_KEY = 'make one with `openssl rand -base64 32`';

/** The variable that set Redis, for messages. */
const REDIS_VARIABLE = {
  standalone: 'REDIS_URL',
  sentinel: 'REDIS_SENTINELS',
  cluster: 'REDIS_CLUSTER_NODES',
} as const;

/**
 * Refuses, naming the variable, a TOKEN_ENCRYPTION_KEY that is not 32 random-looking bytes
 * (whatever NODE_ENV says), and Redis without one under NODE_ENV=production.
 */
async function checkTokenEncryptionKey(config: ExampleConfig): Promise<void> {
  const key = config.tokenEncryptionKey;
  if (key === undefined) {
    if (config.production && config.redis !== undefined) {
      throw new TypeError(
        `NODE_ENV=production with Redis (${REDIS_VARIABLE[config.redis.topology]}) needs TOKEN_ENCRYPTION_KEY (base64 of 32 random bytes), so that refresh tokens are not stored in Redis in the clear: ${MAKE_A_KEY}.`,
      );
    }
    return;
  }
  const problems = await checkSetup({
    encryptionKeys: [{ id: 'k1', key }],
    warn: () => undefined,
  }).catch(() => [{ check: 'patterned-encryption-key' }]);
  if (problems.some((problem) => problem.check === 'patterned-encryption-key')) {
    throw new TypeError(
      `TOKEN_ENCRYPTION_KEY must be base64 of 32 random bytes; this one is not (wrong length, or an obvious pattern such as one byte repeated): ${MAKE_A_KEY}.`,
    );
  }
}

/**
 * Under NODE_ENV=production the package's start-up refusals apply: a SESSION_SECRET that
 * checkSetup() calls weak is refused, naming the variable. Unset, the secret is random per start.
 */
async function checkSessionSecret(config: ExampleConfig): Promise<void> {
  if (!config.production || config.sessionSecretGenerated) return;
  const session = { secret: config.sessionSecret, resave: false };
  const weak = await checkSetup({ session, production: true, warn: () => undefined }).then(
    () => false,
    () => true,
  );
  if (weak) {
    throw new TypeError(
      `NODE_ENV=production needs a SESSION_SECRET of 32 or more random characters; this one is weak (anyone who guesses it can sign session ids): ${MAKE_A_KEY}.`,
    );
  }
}

/** What a start has opened so far: closed again when a later step fails. */
interface Opened {
  server?: Server;
  simulator?: PlatformSimulator;
  redis?: ExampleRedis;
  sessionStore?: RedisSessionStore;
  tokenStore?: RedisTokenStore;
}

/**
 * Starts the example game backend; resolves once it listens and its Redis client has connected
 * (or not within FIRST_CONNECTION_WAIT_MS: it then starts, and the client keeps trying). A failed
 * start (a store refusing its client, say) closes what it had opened, so it leaves no port,
 * connection or timer behind.
 */
export async function startExample(
  config: ExampleConfig,
  options: StartOptions = {},
): Promise<RunningExample> {
  const opened: Opened = {};
  try {
    return await start(config, opened, options);
  } catch (error) {
    opened.server?.close();
    await opened.sessionStore?.close();
    await opened.tokenStore?.close();
    await opened.redis?.close();
    await opened.simulator?.close();
    throw error;
  }
}

/** What a program embedding the example (its tests) sets beside the environment's config. */
export interface StartOptions {
  /** The package's logger; defaults to its own (warnings and errors on the console). */
  logger?: PlatformLogger;
}

async function start(
  config: ExampleConfig,
  opened: Opened,
  options: StartOptions,
): Promise<RunningExample> {
  await checkTokenEncryptionKey(config);
  await checkSessionSecret(config);
  // Listen first: the default redirect_uri names the port, which PORT=0 only tells once bound.
  const server = (opened.server = createServer());
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const redirectUri = config.redirectUri ?? `http://localhost:${port}/platform/callback`;
  // Beside the first registration (`web`): PLATFORM_REGISTRATIONS, else with the embedded
  // simulator a mini-game of its own (docs/registrations.md).
  const registrations =
    config.registrations ??
    (config.platformAuthUrl
      ? []
      : [
          {
            name: 'mini',
            clientId: 'mini-game',
            clientSecret: 'mini-secret',
            redirectUri: `http://localhost:${port}/platform/mini/callback`,
          },
        ]);

  const simulator = (opened.simulator = config.platformAuthUrl
    ? undefined
    : await startSimulator({
        defaultRedirectUri: redirectUri,
        answerStyle: config.answerStyle,
        clients: [
          { clientId: config.clientId, clientSecret: config.clientSecret },
          ...registrations.map(({ clientId, clientSecret }) => ({ clientId, clientSecret })),
        ],
      }));
  const authUrl = config.platformAuthUrl ?? simulator!.url;

  const redis = (opened.redis = config.redis
    ? connectExampleRedis(config.redisClient, config.redis)
    : undefined);
  const encryptionKeys = config.tokenEncryptionKey
    ? [{ id: 'k1', key: config.tokenEncryptionKey }]
    : undefined;
  // Sessions from memory, kept coherent by Redis (docs/session-store.md): a logged-in request with a
  // fresh token sends no Redis command. Keys and values are connect-redis's.
  const sessionStore = (opened.sessionStore = redis
    ? new RedisSessionStore({
        redis: redis.client,
        prefix: 'example:sess:',
        ttlSeconds: config.sessionMaxAgeSeconds,
        operationTimeoutMs: COMMAND_TIMEOUT_MS,
      })
    : undefined);
  const tokenStore = (opened.tokenStore = redis
    ? new RedisTokenStore({
        redis: redis.client,
        prefix: 'example:tokens:',
        ...(encryptionKeys ? { encryptionKeys } : {}),
      })
    : undefined);
  const store: TokenStore = tokenStore ?? new MemoryTokenStore();
  if (!redis && encryptionKeys) {
    console.warn(
      '[example-app] TOKEN_ENCRYPTION_KEY is ignored without Redis (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES): memory tokens never leave the process.',
    );
  }

  const platformOrigins =
    config.platformOrigins ?? (simulator ? [new URL(simulator.url).origin] : undefined);
  const metrics = createExampleMetrics();
  const login = platformLogin({
    authUrl,
    ...(config.platformApiUrl ? { api: { url: config.platformApiUrl } } : {}),
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri,
    registrationName: 'web',
    registrations,
    answerStyle: config.answerStyle,
    store,
    successRedirect: '/',
    meterProvider: metrics.meterProvider,
    // Entries must come from the platform's pages (login CSRF): with the embedded simulator its
    // lobby's origin; with a real platform PLATFORM_ORIGINS, or report only (the package warns).
    ...(platformOrigins ? { platformOrigins } : {}),
    entry: { failureLimit: config.entryFailureLimit },
    sessionMaxAgeSeconds: config.sessionMaxAgeSeconds,
    ...(options.logger ? { logger: options.logger } : {}),
  });

  const app = createExampleApp({
    login,
    sessionStore,
    sessionSecret: config.sessionSecret,
    sessionMaxAgeSeconds: config.sessionMaxAgeSeconds,
    lobbyUrls: simulator
      ? [{ name: 'web', redirectUri, clientId: config.clientId }, ...registrations].map(
          (registration) => ({
            name: registration.name,
            url: `${simulator.url}/?${new URLSearchParams({
              redirect_uri: registration.redirectUri,
              client_id: registration.clientId,
            }).toString()}`,
          }),
        )
      : [{ name: 'web', url: `${authUrl.replace(/\/+$/, '')}/` }],
    isReady: () => redis?.isReady() ?? true,
    metricsHandler: metrics.handler,
    trustProxy: config.trustProxy,
    production: config.production,
    frameAncestors: platformOrigins ? login.frameAncestors() : undefined,
  });

  let closing: Promise<void> | undefined;
  server.on('request', app);
  const gameSocket = attachGameSocket(server, login, app.get(SESSION_MIDDLEWARE));

  // Started means ready: on node-redis (no offline queue) a request before the first connection
  // would answer 503. Redis still not there after FIRST_CONNECTION_WAIT_MS: start anyway, /healthz
  // saying 503 until it first answers, the client reconnecting meanwhile.
  if (redis && !(await redis.whenReady(FIRST_CONNECTION_WAIT_MS))) {
    console.warn(
      '[example-app] Redis is not answering yet: /healthz and requests that need Redis answer 503 until it does (the client keeps reconnecting).',
    );
  }

  return {
    url: `http://${new URL(redirectUri).hostname}:${port}/`,
    redirectUri,
    server,
    login,
    simulator,
    redis,
    close: () => {
      closing ??= (async () => {
        // A keep-alive connection still answering is closed as soon as its answer is out: a client
        // (a browser, a load balancer) would otherwise hold the shutdown for its idle timeout.
        // Node reads both settings when an answer ends (server.close() ends the idle ones).
        // keepAliveTimeoutBuffer is not in @types/node yet; a Node without it waits its 1 s more.
        Object.assign(server, { keepAliveTimeout: 1, keepAliveTimeoutBuffer: 0 });
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        gameSocket.close();
        await closed;
        // The stores' own connections first: an ioredis client closed while it was still
        // reconnecting (Redis down) stops without an `end` event, so they would not follow it.
        await sessionStore?.close();
        await tokenStore?.close();
        await redis?.close();
        await simulator?.close();
        await metrics.meterProvider.shutdown();
      })();
      return closing;
    },
  };
}
