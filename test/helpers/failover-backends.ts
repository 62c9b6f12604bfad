// Two game backend "processes" on a Sentinel failover bed, for the failover tests: each with its own
// Sentinel client (ioredis or node-redis, fail-fast as RedisTokenStore's documentation asks), token
// store, session store and platformLogin; the platform (the simulator) rotates refresh tokens.
import express, { type Express } from 'express';
import request from 'supertest';
import { Redis } from 'ioredis';
import { createSentinel } from 'redis';
import {
  platformLogin,
  RedisSessionStore,
  RedisTokenStore,
  type PlatformLogin,
} from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { startSentinelBed, type SentinelBed } from './failover-bed';
import { answerToken, loginOptions, redisSessions, TEST_REDIRECT_URI } from './test-app';
import { sessionCookieFrom } from './session-cookie';
import { hashSessionId } from '../../lib/core/hash';
import type { ReplicaWaitOutcome } from '../../lib/durability/replica-acks';
import type { TokenRecord } from '../../lib/core/token-record';
import { engineOf } from '../../lib/core/derived-engine';
import { expiringIn, recordAt } from './records';

export type Kind = 'ioredis' | 'node-redis';

/** How far a test makes the bed's replica lag its primary (ms), from the moment the lag matters. */
export const LAG_MS = 1000;

/** A Sentinel client with the fail-fast options RedisTokenStore's documentation asks for. */
async function sentinelClient(kind: Kind, bed: SentinelBed) {
  const retry = (attempt: number): number => Math.min(attempt * 100, 500);
  if (kind === 'ioredis') {
    const client = new Redis({
      sentinels: bed.sentinels,
      name: bed.masterName,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
      connectTimeout: 2000,
      retryStrategy: retry,
      sentinelRetryStrategy: retry,
    });
    client.on('error', () => undefined);
    await new Promise((resolve) => client.once('ready', resolve));
    return { client, close: () => client.disconnect() };
  }
  const client = createSentinel({
    name: bed.masterName,
    sentinelRootNodes: bed.sentinels,
    nodeClientOptions: {
      disableOfflineQueue: true,
      socket: { connectTimeout: 2000, reconnectStrategy: retry },
    },
  });
  client.on('error', () => undefined);
  await client.connect();
  return { client, close: () => client.destroy() };
}

/** Asks the server at `port` on a connection of its own. */
export async function onServer<T>(port: number, ask: (server: Redis) => Promise<T>): Promise<T> {
  const server = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await server.connect();
    return await ask(server);
  } finally {
    server.disconnect();
  }
}

/** The stored value of a session's record on the server at `port` (null when absent). */
export const storedOn = (port: number, sessionKey: string): Promise<string | null> =>
  onServer(port, (server) => server.get(`fo:t:${sessionKey}`));

/** One game backend process: its own client, token store, session store and platformLogin; close() ends all of their connections. */
export interface Backend {
  app: Express;
  login: PlatformLogin;
  store: RedisTokenStore;
  waits: ReplicaWaitOutcome[];
  close(): Promise<void>;
}

async function backend(kind: Kind, bed: SentinelBed, sim: PlatformSimulator): Promise<Backend> {
  const { client, close } = await sentinelClient(kind, bed);
  const store = new RedisTokenStore({ redis: client, prefix: 'fo:' });
  const waits: ReplicaWaitOutcome[] = [];
  store.on('replicaWait', (e) => waits.push(e.outcome));
  const login = platformLogin(loginOptions(sim, { store }));
  const app = express();
  const sessions = new RedisSessionStore({ redis: client });
  app.use(redisSessions(client, sessions));
  app.use('/platform/callback', login.callback);
  app.use('/api', login.middleware());
  app.get('/api/token', answerToken);
  app.post('/logout', login.logout());
  app.post('/logout-everywhere', express.json(), async (req, res, next) => {
    try {
      res.json({ sessions: await login.logoutPlayer(String(req.body.openId)) });
    } catch (error) {
      next(error);
    }
  });
  app.use(login.errorHandler());
  let closed = false;
  return {
    app,
    login,
    store,
    waits,
    close: async () => {
      if (closed) return;
      closed = true;
      await store.close();
      await sessions.close();
      close();
    },
  };
}

/** Enters through `through`; resolves the session cookie and the session key. */
export async function enter(
  through: Backend,
  sim: PlatformSimulator,
  openId = 'player-ada',
): Promise<{ status: number; cookie: string; sessionKey: string }> {
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId });
  const res = await request(through.app).get(`/platform/callback?code=${code}`);
  if (res.status !== 303) return { status: res.status, cookie: '', sessionKey: '' };
  const cookie = sessionCookieFrom(res);
  const id = /^s:(.+)\.[^.]+$/.exec(decodeURIComponent(cookie.split('=')[1]!))![1]!;
  return { status: 303, cookie, sessionKey: hashSessionId(id) };
}

export const tokenOf = (through: Backend, cookie: string) =>
  request(through.app).get('/api/token').set('Cookie', cookie);

/** Statuses a logged-in player gets from `through`, asked every 50 ms until `stop()`. */
export function keepAsking(through: Backend, cookie: string) {
  const statuses: number[] = [];
  let asking = true;
  const done = (async () => {
    while (asking) {
      statuses.push((await tokenOf(through, cookie)).status);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    statuses,
    stop: async () => {
      asking = false;
      await done;
    },
  };
}

/** What each test of a Sentinel failover file starts: the bed, the simulator, two backends on them. */
export interface SentinelBackends {
  bed: SentinelBed;
  sim: PlatformSimulator;
  a: Backend;
  b: Backend;
}

/**
 * Before each test: a fresh bed (a test may kill its primary), the simulator rotating refresh tokens
 * and two backends on `kind`, handed to `take`; all closed after. The replica does not lag until the
 * test says so (`bed.setReplicationDelay(LAG_MS)`): the set-up's logins are acknowledged at once
 * instead of a second each, and the lag holds what the test is about.
 */
export function useSentinelBackends(kind: Kind, take: (set: SentinelBackends) => void): void {
  // A bed starts in seconds and a failover takes several more: every test on it gets a minute.
  jest.setTimeout(60_000);
  // Filled as they start, so what started is closed even when a later start fails.
  let started: Partial<SentinelBackends> = {};
  beforeEach(async () => {
    started = {};
    const bed = (started.bed = await startSentinelBed());
    const sim = (started.sim = await startSimulator({ rotateRefreshTokens: true }));
    started.a = await backend(kind, bed, sim);
    started.b = await backend(kind, bed, sim);
    take(started as SentinelBackends);
  });
  afterEach(async () => {
    const { bed, sim, a, b } = started;
    started = {};
    await a?.close();
    await b?.close();
    await sim?.close();
    await bed?.stop();
  });
}

/**
 * Writes the session's record again as a new version whose access token expires `inMs` from now
 * (-1000: due), with `changes`; resolves the record as written.
 */
export async function rewriteDue(
  { store }: Backend,
  sessionKey: string,
  inMs = -1000,
  changes: Partial<TokenRecord> = {},
): Promise<TokenRecord> {
  const record = (await recordAt(store, sessionKey))!;
  const written = { ...record, ...expiringIn(inMs)(), ...changes, version: record.version + 1 };
  await engineOf(store).records.put(sessionKey, written, {
    expectedVersion: record.version,
    ttlMs: 3600_000,
  });
  return (await recordAt(store, sessionKey))!;
}
