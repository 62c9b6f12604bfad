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
  /** PLATFORM_REGISTRATIONS: registrations beside the first (`web`); unset: `mini` with the embedded simulator. */
  registrations: ExampleRegistration[] | undefined;
  /** Where Redis is (REDIS_URL, REDIS_SENTINELS + REDIS_SENTINEL_NAME or REDIS_CLUSTER_NODES); unset: memory stores. */
  redis: RedisTarget | undefined;
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
  /** Which client talks to Redis, for the session store and the token store: node-redis or ioredis. */
  redisClient: RedisClientKind;
  /** Express's `trust proxy` setting; undefined: not set (X-Forwarded-For not trusted). */
  trustProxy: TrustProxy | undefined;
  /** How the platform's token endpoint answers (PLATFORM_ANSWER_STYLE); the embedded simulator answers so too. */
  answerStyle: AnswerStyle;
}

/** A registration beside the first, as PLATFORM_REGISTRATIONS lists it. */
export interface ExampleRegistration {
  name: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

/** PLATFORM_REGISTRATIONS: a JSON array of `{ name, clientId, clientSecret, redirectUri }`. */
function readRegistrations(value: string | undefined): ExampleRegistration[] | undefined {
  if (value === undefined) return undefined;
  const fields = ['name', 'clientId', 'clientSecret', 'redirectUri'] as const;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const valid =
    Array.isArray(parsed) &&
    parsed.every(
      (entry: unknown) =>
        typeof entry === 'object' &&
        entry !== null &&
        fields.every((field) => typeof (entry as Record<string, unknown>)[field] === 'string'),
    );
  if (!valid)
    throw new TypeError(
      'PLATFORM_REGISTRATIONS must be a JSON array of { "name", "clientId", "clientSecret", "redirectUri" } (strings).',
    );
  return (parsed as ExampleRegistration[]).map(({ name, clientId, clientSecret, redirectUri }) => ({
    name,
    clientId,
    clientSecret,
    redirectUri,
  }));
}

/** PLATFORM_ANSWER_STYLE: `oauth` (RFC 6749), `errcode` (HTTP 200 with errcode/errmsg) or `envelope` (fields inside `data`). */
export type AnswerStyle = 'oauth' | 'errcode' | 'envelope';

const ANSWER_STYLES: readonly AnswerStyle[] = ['oauth', 'errcode', 'envelope'];

/** A Redis node's address, as `host:port` (`[v6 address]:port`) in REDIS_SENTINELS and REDIS_CLUSTER_NODES. */
export interface RedisAddress {
  host: string;
  port: number;
}

/**
 * The Redis the example uses, from one of REDIS_URL (one server), REDIS_SENTINELS with
 * REDIS_SENTINEL_NAME (the master those sentinels watch under that name) or REDIS_CLUSTER_NODES
 * (a Cluster, found from these seed nodes).
 */
export type RedisTarget =
  | { topology: 'standalone'; url: string }
  | { topology: 'sentinel'; sentinels: RedisAddress[]; name: string }
  | { topology: 'cluster'; nodes: RedisAddress[] };

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

/** `host:port` or `[IPv6 address]:port`, port 1-65535; null for anything else. */
function readAddress(text: string): RedisAddress | null {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:/[\]@,]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || port < 1 || port > 65535) return null;
  return { host: (match[1] ?? match[2])!, port };
}

/**
 * A comma-separated list of `host:port` (REDIS_SENTINELS, REDIS_CLUSTER_NODES); an empty entry (a
 * trailing comma) is skipped, anything else that is not `host:port` refused naming the variable.
 */
function readAddresses(variable: string, value: string): RedisAddress[] {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const shape = `comma-separated host:port (e.g. 10.0.0.1:${variable === 'REDIS_SENTINELS' ? '26379,10.0.0.2:26379' : '7000,10.0.0.2:7000'}; an IPv6 address in brackets, [::1]:${variable === 'REDIS_SENTINELS' ? '26379' : '7000'})`;
  if (entries.length === 0) throw new TypeError(`${variable} must be ${shape}; it has no address.`);
  return entries.map((entry) => {
    const address = readAddress(entry);
    if (address === null) {
      throw new TypeError(
        `${variable} must be ${shape}; "${entry}" is not a host:port with a port from 1 to 65535.`,
      );
    }
    return address;
  });
}

/**
 * Where Redis is: REDIS_URL, REDIS_SENTINELS with REDIS_SENTINEL_NAME, or REDIS_CLUSTER_NODES; more
 * than one of them, a sentinel list without the master's name (or the name without the list), or
 * an address that is not `host:port` is refused naming the variable.
 */
function readRedisTarget(env: NodeJS.ProcessEnv): RedisTarget | undefined {
  const url = nonEmpty(env.REDIS_URL);
  const sentinels = nonEmpty(env.REDIS_SENTINELS);
  const sentinelName = nonEmpty(env.REDIS_SENTINEL_NAME);
  const clusterNodes = nonEmpty(env.REDIS_CLUSTER_NODES);
  const given = [
    ...(url === undefined ? [] : ['REDIS_URL']),
    ...(sentinels === undefined ? [] : ['REDIS_SENTINELS']),
    ...(clusterNodes === undefined ? [] : ['REDIS_CLUSTER_NODES']),
  ];
  if (given.length > 1) {
    throw new TypeError(
      `${given.slice(0, -1).join(', ')} and ${given.at(-1)} are ${given.length === 2 ? 'both' : 'all'} set: set only one of REDIS_URL (one Redis server), REDIS_SENTINELS (with REDIS_SENTINEL_NAME) or REDIS_CLUSTER_NODES (a Cluster).`,
    );
  }
  if (sentinels !== undefined && sentinelName === undefined) {
    throw new TypeError(
      'REDIS_SENTINELS needs REDIS_SENTINEL_NAME: the name the sentinels know the master by (`sentinel monitor <name> …` in their configuration).',
    );
  }
  if (sentinelName !== undefined && sentinels === undefined) {
    throw new TypeError(
      "REDIS_SENTINEL_NAME is set without REDIS_SENTINELS: set REDIS_SENTINELS to the sentinels' comma-separated host:port as well, or unset REDIS_SENTINEL_NAME.",
    );
  }
  if (url !== undefined) return { topology: 'standalone', url };
  if (sentinels !== undefined) {
    return {
      topology: 'sentinel',
      sentinels: readAddresses('REDIS_SENTINELS', sentinels),
      name: sentinelName!,
    };
  }
  if (clusterNodes !== undefined) {
    return { topology: 'cluster', nodes: readAddresses('REDIS_CLUSTER_NODES', clusterNodes) };
  }
  return undefined;
}

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
  const answerStyle = (nonEmpty(env.PLATFORM_ANSWER_STYLE) ?? 'oauth') as AnswerStyle;
  if (!ANSWER_STYLES.includes(answerStyle)) {
    throw new TypeError(
      `PLATFORM_ANSWER_STYLE must be "oauth" (the default), "errcode" or "envelope"; it is "${answerStyle}".`,
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
    registrations: readRegistrations(nonEmpty(env.PLATFORM_REGISTRATIONS)),
    redis: readRedisTarget(env),
    sessionSecret: sessionSecret ?? randomBytes(32).toString('base64url'),
    sessionSecretGenerated: sessionSecret === undefined,
    tokenEncryptionKey: nonEmpty(env.TOKEN_ENCRYPTION_KEY),
    platformOrigins: origins === undefined || origins.length === 0 ? undefined : origins,
    entryFailureLimit,
    sessionMaxAgeSeconds,
    production: env.NODE_ENV === 'production',
    redisClient,
    trustProxy: readTrustProxy(nonEmpty(env.TRUST_PROXY)),
    answerStyle,
  };
}
