// Start-up checks that refuse a dangerous setup or warn loudly, naming the fix: the
// express-session / Express / Redis setup (`checkSetup()`, once at start). The checks that need
// only platformLogin()'s options are creation-checks.ts; those that need a request,
// entry-setup-checks.ts.
import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../redis/redis-client';
import { isIoRedis } from '../redis/ioredis-commands';
import type { SessionOptions, Store } from 'express-session';
import { withDeadline } from '../redis/with-deadline';
import type { TokenStore } from '../core/token-store';
import {
  decodeEncryptionKey,
  keyPatternProblem,
  MAKE_A_KEY,
  type EncryptionKey,
} from '../stores/encryption';
import { RedisTokenStore } from '../stores/redis-store';
import { SetupError } from '../errors';
import { checkCallbackMounts } from './mounted-callbacks';

/** The names of the checks of {@link checkSetup}. */
export type SetupCheckName =
  | 'weak-session-secret'
  | 'session-resave'
  | 'secure-cookie-without-trust-proxy'
  | 'insecure-session-cookie'
  | 'redis-evicts-keys'
  | 'redis-not-connected'
  | 'connect-redis-ioredis'
  | 'plaintext-token-store'
  | 'patterned-encryption-key';

/** One finding of {@link checkSetup}: `'error'` refuses the start, `'warning'` is logged once. */
export interface SetupProblem {
  check: SetupCheckName;
  severity: 'error' | 'warning';
  /** What is wrong and how to fix it; never a secret. */
  message: string;
}

/** What {@link checkSetup} looks at; leave out what you do not use. */
export interface SetupCheckInput {
  /**
   * The Express app: its `trust proxy` setting is checked against a Secure session cookie, and
   * where it mounts each `login.callback` against redirectUri's path (now, and once the code that
   * follows this call has mounted the rest), said once on that login's logger.
   */
  app?: { get(setting: string): unknown };
  /** The options given to express-session (`secret`, `resave`, `cookie`, `proxy`, `store`). */
  session?: SessionOptions;
  /**
   * The client of the RedisTokenStore (node-redis or ioredis): its eviction policy is read with
   * CONFIG GET (on every master of an ioredis Cluster; not through a node-redis Cluster or Sentinel).
   */
  redis?: RedisClient;
  /**
   * `true` when TLS ends at a proxy or load balancer in front of this process: a Secure cookie
   * without `trust proxy` is then refused instead of warned about. Defaults to unknown.
   */
  behindProxy?: boolean;
  /**
   * The token store given to platformLogin(): a RedisTokenStore without `encryptionKeys` keeps
   * refresh tokens in the clear (an error in production, a warning otherwise).
   */
  tokenStore?: TokenStore;
  /** The encryption keys you mean to give RedisTokenStore: an obviously patterned one is an error. */
  encryptionKeys?: readonly EncryptionKey[];
  /** Production rules (a weak secret refuses the start). Defaults to `NODE_ENV === 'production'`. */
  production?: boolean;
  /** Where warnings go, each message once per function. Defaults to `console.warn`. */
  warn?: (message: string) => void;
}

const PREFIX = '[express-platform-login]';
/** How long the eviction check waits for Redis: a stalled Redis must not hang the start. */
const CONFIG_TIMEOUT_MS = 1500;
const defaultWarn = (message: string): void => console.warn(message);
const warnedBy = new WeakMap<(message: string) => void, Set<string>>();

/** Calls `warn` with `message` unless this very function already got it. */
export function warnOnce(warn: (message: string) => void, message: string): void {
  let seen = warnedBy.get(warn);
  if (seen === undefined) warnedBy.set(warn, (seen = new Set()));
  if (seen.has(message)) return;
  seen.add(message);
  warn(message);
}

/** A secret an attacker could guess or brute-force: short, or of few distinct characters. */
function isWeakSecret(secret: string): boolean {
  return secret.length < 32 || new Set(secret).size < 10;
}

/** One finding, as the checks below return it. */
const finding = (check: SetupCheckName, severity: SetupProblem['severity'], message: string) => [
  { check, severity, message },
];

function secretProblems(session: SessionOptions, production: boolean): SetupProblem[] {
  const secrets = ([] as unknown[]).concat(session.secret ?? []);
  if (secrets.length === 0 || secrets.some((secret) => typeof secret !== 'string')) {
    return finding(
      'weak-session-secret',
      'error',
      "express-session has no `secret` (or one that is not a string): give it 32 or more random bytes, e.g. `crypto.randomBytes(32).toString('base64')` kept in your secret store.",
    );
  }
  if (!(secrets as string[]).some(isWeakSecret)) return [];
  return finding(
    'weak-session-secret',
    production ? 'error' : 'warning',
    "An express-session `secret` is weak (under 32 characters, or fewer than 10 distinct ones): anyone who guesses it can sign session ids. Use 32 or more random bytes, e.g. `crypto.randomBytes(32).toString('base64')` kept in your secret store.",
  );
}

function resaveProblems(session: SessionOptions): SetupProblem[] {
  if (session.resave === false) return [];
  return finding(
    'session-resave',
    'warning',
    'express-session `resave` is ' +
      (session.resave === true ? 'true' : 'not set (it defaults to true)') +
      ': every request writes its session back, so a request that began before a logout or a new entry can restore the old session. Set `resave: false`; this package never needs it (tokens are not kept in the session).',
  );
}

function proxyProblems(
  session: SessionOptions,
  app: SetupCheckInput['app'],
  behindProxy: boolean | undefined,
): SetupProblem[] {
  if (app === undefined || behindProxy === false || session.proxy === true) return [];
  // A cookie computed per request (express-session 1.19 accepts a function) cannot be judged here.
  const cookie = typeof session.cookie === 'object' ? session.cookie : undefined;
  if (cookie?.secure !== true || Boolean(app.get('trust proxy'))) return [];
  const message =
    "The session cookie is Secure but the app does not trust its proxy: behind a proxy that ends TLS, Express sees every request as http and express-session never sends the cookie (players enter, and land logged out). Set `app.set('trust proxy', 1)` (the number of proxies in front of the app) before the session middleware.";
  return finding(
    'secure-cookie-without-trust-proxy',
    behindProxy === true ? 'error' : 'warning',
    behindProxy === true ? message : `${message} (Ignore this if the app ends TLS itself.)`,
  );
}

/**
 * What a production session cookie lacks, said with the fix; `undefined` when it has `Secure` (or
 * express-session's `'auto'`) and a `SameSite`. Also judged on the first entries (entry-setup-checks.ts).
 */
export function insecureCookieMessage(
  cookie: { secure?: unknown; sameSite?: unknown } | undefined,
): string | undefined {
  const lacks = [
    ...(cookie?.secure === true || cookie?.secure === 'auto' ? [] : ['Secure']),
    ...(cookie?.sameSite === undefined || cookie.sameSite === false ? ['SameSite'] : []),
  ];
  if (lacks.length === 0) return undefined;
  return (
    `Under NODE_ENV=production the session cookie, which carries the player's whole login, has no ${lacks.join(' and no ')}: ` +
    (lacks.includes('Secure') ? 'a plain-http request to the game sends it in the clear. ' : '') +
    (lacks.includes('SameSite')
      ? "Each browser's own defaults decide whether other sites' requests carry it. "
      : '') +
    "Set `cookie: { secure: true, sameSite: 'lax' }` in express-session's options, with `app.set('trust proxy', 1)` (the number of proxies) when a proxy ends TLS; " +
    "in the platform's iframe (`embedded`), `sameSite: 'none'` with `secure: true`."
  );
}

function cookieProblems(session: SessionOptions, production: boolean): SetupProblem[] {
  // A cookie computed per request (express-session 1.19 accepts a function) is judged at the entry.
  if (!production || typeof session.cookie === 'function') return [];
  const message = insecureCookieMessage(session.cookie);
  return message === undefined ? [] : finding('insecure-session-cookie', 'warning', message);
}

/**
 * True for a connect-redis store holding an ioredis client as it is. connect-redis 8 wraps the
 * client it is given; 9 and later keep it (`this.client = opts.client`) and call it with the
 * `redis` package's API (`set(key, value, { expiration })`), which ioredis does not understand.
 */
export function isConnectRedisWithIoredis(store: Store | undefined): boolean {
  if (store === undefined) return false;
  const { prefix, serializer, client } = store as {
    prefix?: unknown;
    serializer?: unknown;
    client?: unknown;
  };
  return (
    typeof prefix === 'string' &&
    serializer !== undefined &&
    typeof client === 'object' &&
    client !== null &&
    isIoRedis(client)
  );
}

/** The message of the connect-redis check (also used on the first entry). */
export const CONNECT_REDIS_IOREDIS_MESSAGE =
  "The session store is connect-redis 9 or later given an ioredis client: those versions speak only the `redis` package's API, so sessions are not stored. Install `connect-redis@~8.1` (the last line that accepts ioredis), or give connect-redis a `redis` client.";

function connectRedisProblems(session: SessionOptions): SetupProblem[] {
  if (!isConnectRedisWithIoredis(session.store)) return [];
  return finding('connect-redis-ioredis', 'error', CONNECT_REDIS_IOREDIS_MESSAGE);
}

/** maxmemory and maxmemory-policy of one node, or `undefined` when CONFIG is not available. */
async function evictionSettings(configGet: () => Promise<unknown>) {
  try {
    const reply = await withDeadline(configGet(), CONFIG_TIMEOUT_MS, 'CONFIG GET');
    const settings = new Map<string, string>();
    // A flat [name, value, …] array, or a map (an object) under RESP3 (node-redis, ioredis 6's 'resp3').
    const pairs = Array.isArray(reply) ? reply : Object.entries(reply as object).flat();
    for (let i = 0; i + 1 < pairs.length; i += 2)
      settings.set(String(pairs[i]), String(pairs[i + 1]));
    const policy = settings.get('maxmemory-policy');
    return policy === undefined
      ? undefined
      : { maxmemory: Number(settings.get('maxmemory') ?? '0'), policy };
  } catch {
    // Managed services often rename or disable CONFIG; the check is then left to the operator.
    return undefined;
  }
}

/** CONFIG GET maxmemory* on each node the client reaches by itself. */
function configGetters(redis: RedisClient): Array<() => Promise<unknown>> {
  if (isIoRedis(redis)) {
    const nodes: Redis[] = redis.isCluster
      ? (redis as unknown as Cluster).nodes('master')
      : [redis as unknown as Redis];
    return nodes.map((node) => () => node.config('GET', 'maxmemory*') as Promise<unknown>);
  }
  // A node-redis client: a plain one answers CONFIG itself; a Cluster or Sentinel is left out.
  const client = redis as { sendCommand: (args: string[]) => Promise<unknown> };
  if ('getSlotMaster' in redis || 'getMasterNode' in redis) return [];
  return [() => client.sendCommand(['CONFIG', 'GET', 'maxmemory*'])];
}

async function redisProblems(redis: RedisClient): Promise<SetupProblem[]> {
  // node-redis sends nothing before connect() (ioredis connects by itself).
  if ((redis as { isOpen?: unknown }).isOpen === false)
    return finding(
      'redis-not-connected',
      'error',
      'The Redis client is not connected: node-redis sends nothing before `await redis.connect()`, so every entry would answer 503. Connect it before `checkSetup()`.',
    );
  const found = await Promise.all(configGetters(redis).map(evictionSettings));
  const evicting = found.find(
    (settings) =>
      settings !== undefined && settings.maxmemory > 0 && settings.policy !== 'noeviction',
  );
  if (evicting === undefined) return [];
  return finding(
    'redis-evicts-keys',
    'warning',
    `Redis evicts keys under memory pressure (maxmemory-policy ${evicting.policy.replace(/[^a-z-]/g, '')}): it would delete token records (players logged out) and code claims (a code could be sent twice). ` +
      'Set `maxmemory-policy noeviction`; every key of this package and of connect-redis has a TTL, so volatile-* policies evict them too.',
  );
}

function tokenStoreProblems(input: SetupCheckInput, production: boolean): SetupProblem[] {
  const problems: SetupProblem[] = [];
  if (input.tokenStore instanceof RedisTokenStore && input.tokenStore.storesPlaintext) {
    problems.push({
      check: 'plaintext-token-store',
      severity: production ? 'error' : 'warning',
      message:
        'RedisTokenStore has no `encryptionKeys`: refresh tokens sit in Redis in the clear, readable by anyone who can read Redis or its backups. ' +
        `Give it \`encryptionKeys: [{ id: 'k1', key }]\` (${MAKE_A_KEY}).`,
    });
  }
  (input.encryptionKeys ?? []).forEach(({ id, key }) => {
    const bytes = decodeEncryptionKey(key);
    const problem = bytes === undefined ? 'it is not 32 bytes' : keyPatternProblem(bytes);
    if (problem === undefined) return;
    problems.push({
      check: 'patterned-encryption-key',
      severity: 'error',
      message: `The encryption key "${id.replace(/[^A-Za-z0-9._-]/g, '')}" is not a random 32-byte key (${problem}); ${MAKE_A_KEY}.`,
    });
  });
  return problems;
}

/**
 * Checks the setup around the package once at start (each {@link SetupCheckName}): warnings go to
 * `warn` (each once); errors throw one SetupError (`ERR_PLATFORM_SETUP`) naming every fix. Resolves
 * every problem found. Call it after configuring the app, before listening:
 * `await checkSetup({ app, session: sessionOptions, redis })`.
 */
export async function checkSetup(input: SetupCheckInput): Promise<SetupProblem[]> {
  const production = input.production ?? process.env.NODE_ENV === 'production';
  const session = input.session;
  const problems: SetupProblem[] = [];
  if (session !== undefined) {
    problems.push(
      ...secretProblems(session, production),
      ...resaveProblems(session),
      ...proxyProblems(session, input.app, input.behindProxy),
      ...cookieProblems(session, production),
      ...connectRedisProblems(session),
    );
  }
  problems.push(...tokenStoreProblems(input, production));
  if (input.redis !== undefined) problems.push(...(await redisProblems(input.redis)));

  const app = input.app;
  if (app !== undefined) {
    checkCallbackMounts(app);
    // The README mounts the callback after `await checkSetup()`: look again once that has run.
    setImmediate(() => checkCallbackMounts(app));
  }

  const warn = input.warn ?? defaultWarn;
  for (const problem of problems) {
    if (problem.severity === 'warning') warnOnce(warn, `${PREFIX} ${problem.message}`);
  }
  const errors = problems.filter((problem) => problem.severity === 'error');
  if (errors.length > 0) {
    throw new SetupError(`checkSetup(): ${errors.map((problem) => problem.message).join(' ')}`);
  }
  return problems;
}
