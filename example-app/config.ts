// Reads the example's environment (docs/example-app.md "Environment variables"), with an embedded
// default for everything.
import { randomBytes } from 'node:crypto';
import express from 'express';

/** The example's settings, after defaults. */
export interface ExampleConfig {
  port: number;
  host: string;
  /** Unset: start the platform simulator in-process. */
  platformAuthUrl: string | undefined;
  platformApiUrl: string | undefined;
  clientId: string;
  clientSecret: string;
  /** Unset: `http://localhost:<listening port>/platform/callback`, known once the server listens (PORT=0). */
  redirectUri: string | undefined;
  /** Unset: memory stores. */
  redisUrl: string | undefined;
  sessionSecret: string;
  sessionSecretGenerated: boolean;
  /** base64 of 32 bytes; set: tokens encrypted at rest. */
  tokenEncryptionKey: string | undefined;
  /** Origins of the platform's pages that open the game; unset: the embedded simulator's, or none (report only). */
  platformOrigins: string[] | undefined;
  /** Failed entries allowed per client address per 10 minutes; 0: no limit. */
  entryFailureLimit: number;
  /** Session lifetime; every Redis key a login creates expires with its session. */
  sessionMaxAgeSeconds: number;
  /** `NODE_ENV=production`: Redis without TOKEN_ENCRYPTION_KEY is refused. */
  production: boolean;
  /** Which client talks to REDIS_URL, for the session store and the token store: node-redis or ioredis. */
  redisClient: RedisClientKind;
  /** Express's `trust proxy` setting; undefined: not set (X-Forwarded-For not trusted). */
  trustProxy: TrustProxy | undefined;
}

/** REDIS_CLIENT: `redis` (node-redis 5/6) or `ioredis` (ioredis 5/6). */
export type RedisClientKind = 'redis' | 'ioredis';

/** What Express's `trust proxy` takes: true/false, a hop count, or addresses, subnets and names. */
export type TrustProxy = boolean | number | string;

const REDIS_CLIENTS: readonly RedisClientKind[] = ['redis', 'ioredis'];

/**
 * TRUST_PROXY as Express's `trust proxy` reads it: `true`/`false`, a whole number of hops, or a
 * comma-separated list of addresses, subnets and the names `loopback`, `linklocal`, `uniquelocal`;
 * refused here, naming the variable, when Express cannot read it.
 */
function readTrustProxy(value: string | undefined): TrustProxy | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  const setting =
    text === 'true' ? true : text === 'false' ? false : /^\d+$/.test(text) ? Number(text) : text;
  try {
    // Express compiles the setting when it is set and throws for an address it cannot read.
    express().set('trust proxy', setting);
  } catch (error) {
    throw new TypeError(
      `TRUST_PROXY must be Express's \`trust proxy\` setting (true, a number of hops, or addresses, subnets, loopback, linklocal, uniquelocal separated by commas): ${error instanceof Error ? error.message : String(error)}.`,
    );
  }
  return setting;
}

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value === '' ? undefined : value;

/** Reads the example's settings from `env` (process.env by default); an empty variable counts as unset. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): ExampleConfig {
  const port = Number(nonEmpty(env.PORT) ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new TypeError('PORT must be a port number (0-65535).');
  }
  const sessionSecret = nonEmpty(env.SESSION_SECRET);
  const entryFailureLimit = Number(nonEmpty(env.ENTRY_FAILURE_LIMIT) ?? 20);
  if (!Number.isInteger(entryFailureLimit) || entryFailureLimit < 0) {
    throw new TypeError(
      'ENTRY_FAILURE_LIMIT must be a whole number, 0 or more (0 turns the limit off).',
    );
  }
  const origins = nonEmpty(env.PLATFORM_ORIGINS)
    ?.split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  const sessionMaxAgeSeconds = Number(nonEmpty(env.SESSION_MAX_AGE_SECONDS) ?? 86_400);
  if (
    !Number.isInteger(sessionMaxAgeSeconds) ||
    sessionMaxAgeSeconds < 60 ||
    sessionMaxAgeSeconds > 31_536_000
  ) {
    throw new TypeError(
      'SESSION_MAX_AGE_SECONDS must be a whole number of seconds from 60 to 31536000 (a year).',
    );
  }
  const redisClient = (nonEmpty(env.REDIS_CLIENT) ?? 'redis') as RedisClientKind;
  if (!REDIS_CLIENTS.includes(redisClient)) {
    throw new TypeError(
      `REDIS_CLIENT must be "redis" (node-redis, the default) or "ioredis"; it is "${redisClient}".`,
    );
  }
  return {
    port,
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    platformAuthUrl: nonEmpty(env.PLATFORM_AUTH_URL),
    platformApiUrl: nonEmpty(env.PLATFORM_API_URL),
    clientId: nonEmpty(env.PLATFORM_CLIENT_ID) ?? 'demo-game',
    clientSecret: nonEmpty(env.PLATFORM_CLIENT_SECRET) ?? 'demo-secret',
    redirectUri: nonEmpty(env.PLATFORM_REDIRECT_URI),
    redisUrl: nonEmpty(env.REDIS_URL),
    sessionSecret: sessionSecret ?? randomBytes(32).toString('base64url'),
    sessionSecretGenerated: sessionSecret === undefined,
    tokenEncryptionKey: nonEmpty(env.TOKEN_ENCRYPTION_KEY),
    platformOrigins: origins === undefined || origins.length === 0 ? undefined : origins,
    entryFailureLimit,
    sessionMaxAgeSeconds,
    production: env.NODE_ENV === 'production',
    redisClient,
    trustProxy: readTrustProxy(nonEmpty(env.TRUST_PROXY)),
  };
}
