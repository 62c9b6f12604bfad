// Starts the example on its configuration: the embedded simulator when no platform is configured,
// Redis stores when REDIS_URL is set, memory stores otherwise. Used by server.ts and by the tests.
import type { Server } from 'node:http';
import { once } from 'node:events';
import { RedisStore } from 'connect-redis';
import type { Redis } from 'ioredis';
import { MemoryTokenStore, RedisTokenStore, platformLogin, type PlatformLogin, type TokenStore } from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { createExampleApp } from './app';
import type { ExampleConfig } from './config';
import { createRedisClient } from './redis-client';

export interface RunningExample {
  /** The URL to open. */
  url: string;
  server: Server;
  login: PlatformLogin;
  /** The embedded simulator, when no platform URL was configured. */
  simulator: PlatformSimulator | undefined;
  redis: Redis | undefined;
  /** Stops accepting, lets requests in flight finish, then closes Redis and the simulator. */
  close(): Promise<void>;
}

export async function startExample(config: ExampleConfig): Promise<RunningExample> {
  const simulator = config.platformAuthUrl
    ? undefined
    : await startSimulator({ defaultRedirectUri: config.redirectUri });
  const authUrl = config.platformAuthUrl ?? simulator!.url;

  const redis = config.redisUrl ? createRedisClient(config.redisUrl) : undefined;
  const encryptionKeys = config.tokenEncryptionKey ? [{ id: 'k1', key: config.tokenEncryptionKey }] : undefined;
  const store: TokenStore = redis
    ? new RedisTokenStore({ redis, prefix: 'example:tokens:', ...(encryptionKeys ? { encryptionKeys } : {}) })
    : new MemoryTokenStore();
  if (!redis && encryptionKeys) {
    console.warn('[example-app] TOKEN_ENCRYPTION_KEY is ignored without REDIS_URL: memory tokens never leave the process.');
  }

  const login = platformLogin({
    authUrl,
    ...(config.platformApiUrl ? { apiUrl: config.platformApiUrl } : {}),
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri: config.redirectUri,
    store,
    successRedirect: '/',
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
    lobbyUrl: simulator
      ? `${simulator.url}/?redirect_uri=${encodeURIComponent(config.redirectUri)}`
      : `${authUrl.replace(/\/+$/, '')}/`,
    isReady: () => ready,
  });

  const server = app.listen(config.port, config.host);
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const pageHost = new URL(config.redirectUri).hostname;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${pageHost}:${port}/`,
    server,
    login,
    simulator,
    redis,
    close: () => {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await redis?.quit().catch(() => redis.disconnect());
        await simulator?.close();
      })();
      return closing;
    },
  };
}
