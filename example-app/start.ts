// Starts the example on its configuration: the embedded simulator when no platform is configured,
// Redis stores when REDIS_URL is set, memory stores otherwise. Used by server.ts and by the tests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { RedisStore } from 'connect-redis8';
import type { Redis } from 'ioredis';
import {
  checkSetup,
  MemoryTokenStore,
  RedisTokenStore,
  platformLogin,
  type PlatformLogin,
  type TokenStore,
} from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { createExampleApp, SESSION_MIDDLEWARE } from './app';
import { attachGameSocket } from './game-socket';
import type { ExampleConfig } from './config';
import { createRedisClient } from './redis-client';
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
  redis: Redis | undefined;
  /** Stops accepting, lets requests in flight finish, then closes Redis and the simulator. */
  close(): Promise<void>;
}

const MAKE_A_KEY = 'make one with `openssl rand -base64 32`';

/**
 * Refuses, naming the variable, a TOKEN_ENCRYPTION_KEY that is not 32 random-looking bytes
 * (whatever NODE_ENV says), and Redis without one under NODE_ENV=production.
 */
async function checkTokenEncryptionKey(config: ExampleConfig): Promise<void> {
  const key = config.tokenEncryptionKey;
  if (key === undefined) {
    if (config.production && config.redisUrl !== undefined) {
      throw new TypeError(
        `NODE_ENV=production with REDIS_URL needs TOKEN_ENCRYPTION_KEY (base64 of 32 random bytes), so that refresh tokens are not stored in Redis in the clear: ${MAKE_A_KEY}.`,
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

/** Starts the example game backend; resolves once it listens. */
export async function startExample(config: ExampleConfig): Promise<RunningExample> {
  await checkTokenEncryptionKey(config);
  // Listen first: the default redirect_uri names the port, which PORT=0 only tells once bound.
  const server = createServer();
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const redirectUri = config.redirectUri ?? `http://localhost:${port}/platform/callback`;

  const simulator = config.platformAuthUrl
    ? undefined
    : await startSimulator({ defaultRedirectUri: redirectUri });
  const authUrl = config.platformAuthUrl ?? simulator!.url;

  const redis = config.redisUrl ? createRedisClient(config.redisUrl) : undefined;
  const encryptionKeys = config.tokenEncryptionKey
    ? [{ id: 'k1', key: config.tokenEncryptionKey }]
    : undefined;
  const store: TokenStore = redis
    ? new RedisTokenStore({
        redis,
        prefix: 'example:tokens:',
        ...(encryptionKeys ? { encryptionKeys } : {}),
      })
    : new MemoryTokenStore();
  if (!redis && encryptionKeys) {
    console.warn(
      '[example-app] TOKEN_ENCRYPTION_KEY is ignored without REDIS_URL: memory tokens never leave the process.',
    );
  }

  const platformOrigins =
    config.platformOrigins ?? (simulator ? [new URL(simulator.url).origin] : undefined);
  const metrics = createExampleMetrics();
  const login = platformLogin({
    authUrl,
    ...(config.platformApiUrl ? { apiUrl: config.platformApiUrl } : {}),
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri,
    store,
    successRedirect: '/',
    meterProvider: metrics.meterProvider,
    // Entries must come from the platform's pages (login CSRF): with the embedded simulator its
    // lobby's origin; with a real platform PLATFORM_ORIGINS, or report only (the package warns).
    ...(platformOrigins ? { platformOrigins } : {}),
    entryFailureLimit: config.entryFailureLimit,
    sessionMaxAgeSeconds: config.sessionMaxAgeSeconds,
  });

  let ready = redis === undefined;
  redis?.on('ready', () => (ready = true));
  redis?.on('end', () => (ready = false));
  // ioredis reports connection errors as events; without a listener they would be printed as unhandled.
  redis?.on('error', () => undefined);

  const app = createExampleApp({
    login,
    sessionStore: redis ? new RedisStore({ client: redis, prefix: 'example:sess:' }) : undefined,
    sessionSecret: config.sessionSecret,
    sessionMaxAgeSeconds: config.sessionMaxAgeSeconds,
    lobbyUrl: simulator
      ? `${simulator.url}/?redirect_uri=${encodeURIComponent(redirectUri)}`
      : `${authUrl.replace(/\/+$/, '')}/`,
    isReady: () => ready,
    metricsHandler: metrics.handler,
  });

  let closing: Promise<void> | undefined;
  server.on('request', app);
  const gameSocket = attachGameSocket(server, login, app.get(SESSION_MIDDLEWARE));
  // While closing, a connection is closed as soon as its last answer is out: a keep-alive client
  // (a browser, a load balancer) would otherwise hold the shutdown for its idle timeout.
  server.on('request', (_req, res) => {
    res.on('finish', () => closing && server.closeIdleConnections());
  });

  return {
    url: `http://${new URL(redirectUri).hostname}:${port}/`,
    redirectUri,
    server,
    login,
    simulator,
    redis,
    close: () => {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        gameSocket.close();
        await closed;
        await redis?.quit().catch(() => redis.disconnect());
        await simulator?.close();
        await metrics.meterProvider.shutdown();
      })();
      return closing;
    },
  };
}
