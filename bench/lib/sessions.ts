// Logged-in sessions for the benchmarks: made through each app's real login route, and moved
// through time by rewriting what Redis holds (the token record, or the session for the naive app).
import type { Agent } from 'node:http';
import type { Redis } from 'ioredis';
import type { TokenStore } from '../../lib/core/token-store';
import type { PlatformSimulator } from '../../lib/simulator';
import { DEMO_PLAYERS } from '../../lib/simulator/demo-data';
import { BENCH_REDIRECT_URI } from './settings';
import { send, type Answer } from './load';
import { readRecord, writeRecord } from './records';

/** A browser's login: the cookie to send and the session id behind it. */
export interface BenchSession {
  cookie: string;
  sessionId: string;
}

const HOUR_MS = 3_600_000;

/** The player of the i-th session (the simulator knows three). */
export const playerOf = (index: number): string =>
  DEMO_PLAYERS[index % DEMO_PLAYERS.length]!.openId;

/** The `connect.sid=…` pair out of Set-Cookie headers, and the session id in its signed value. */
export function sessionIn(setCookie: string | string[] | undefined): BenchSession | undefined {
  const cookie = ([] as string[])
    .concat(setCookie ?? [])
    .find((c) => c.startsWith('connect.sid='))
    ?.split(';')[0];
  const match =
    cookie && /^s:(.+)\.[^.]+$/.exec(decodeURIComponent(cookie.slice('connect.sid='.length)));
  return cookie && match ? { cookie, sessionId: match[1]! } : undefined;
}

/** {@link sessionIn}, for an answer that must have set one. */
function sessionOf(answer: Pick<Answer, 'status' | 'headers'>): BenchSession {
  const session = sessionIn(answer.headers['set-cookie']);
  if (session === undefined)
    throw new Error(`no session cookie in an answer with status ${answer.status}`);
  return session;
}

/**
 * What a browser sends when the platform's lobby page opens the game (a top-level navigation):
 * the bench apps check entries against the simulator's origin, as the quick start does.
 */
export const entryHeaders = (sim: Pick<PlatformSimulator, 'url'>): Record<string, string> => ({
  referer: `${sim.url}/`,
  'sec-fetch-site': 'same-site',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
});

/** Enters the game through an app's callback with a code issued by the simulator (303 expected). */
export async function enter(
  agent: Agent,
  sim: PlatformSimulator,
  port: number,
  openId: string,
): Promise<BenchSession> {
  const code = sim.issueCode({ openId, redirectUri: BENCH_REDIRECT_URI });
  const answer = await send(
    agent,
    {
      port,
      path: `/platform/callback?code=${encodeURIComponent(code)}`,
      headers: entryHeaders(sim),
    },
    true,
  );
  if (answer.status !== 303) throw new Error(`entry answered ${answer.status}: ${answer.body}`);
  return sessionOf(answer);
}

/** Logs in to the baseline app, which only writes a marker into the session (204 expected). */
export async function loginBaseline(
  agent: Agent,
  port: number,
  openId: string,
): Promise<BenchSession> {
  const answer = await send(
    agent,
    { port, path: `/login?openId=${encodeURIComponent(openId)}` },
    true,
  );
  if (answer.status !== 204) throw new Error(`baseline login answered ${answer.status}`);
  return sessionOf(answer);
}

/**
 * Makes a session's token record expired a second ago (obtained 2 h before that), as another
 * writer would: version + 1, compare-and-set.
 */
export async function expireRecord(store: TokenStore, sessionId: string): Promise<void> {
  const record = await readRecord(store, sessionId);
  if (record === undefined) throw new Error('no token record to expire');
  const accessExpiresAt = Date.now() - 1000;
  const next = {
    ...record,
    accessExpiresAt,
    obtainedAt: accessExpiresAt - 2 * HOUR_MS,
    version: record.version + 1,
  };
  const options = { expectedVersion: record.version, ttlMs: HOUR_MS };
  if (!(await writeRecord(store, sessionId, next, options))) {
    throw new Error('the token record changed while it was being expired');
  }
}

/** The same for the naive app: its tokens are in the session, which connect-redis keeps as JSON. */
export async function expireNaiveSession(redis: Redis, sessionKey: string): Promise<void> {
  const stored = await redis.get(sessionKey);
  if (stored === null) throw new Error('no session to expire');
  const data = JSON.parse(stored) as { tokens?: { expiresAt: number } };
  if (data.tokens === undefined) throw new Error('the session holds no tokens');
  data.tokens.expiresAt = Date.now() - 1000;
  await redis.set(sessionKey, JSON.stringify(data), 'KEEPTTL');
}

/** Whether the naive app's session still holds tokens (false: the player was logged out). */
export async function naiveSessionHasTokens(redis: Redis, sessionKey: string): Promise<boolean> {
  const stored = await redis.get(sessionKey);
  return stored !== null && (JSON.parse(stored) as { tokens?: unknown }).tokens !== undefined;
}
