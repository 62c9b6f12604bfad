// Logged-in sessions for the benchmarks: made through each app's real login route, and moved
// through time by rewriting what Redis holds (the token record, or the session for the naive app).
import type { Agent } from 'node:http';
import type { Redis } from 'ioredis';
import type { TokenStore } from '../../lib/core/token-store';
import type { PlatformSimulator } from '../../lib/simulator';
import { DEMO_PLAYERS } from '../../lib/simulator/options';
import { BENCH_REDIRECT_URI } from './settings';
import { send, type Answer } from './load';
import { readRecord, writeRecord } from './records';

/** A browser's login: the cookie to send and the session id behind it. */
export type BenchSession = { cookie: string; sessionId: string };

// Players of the i-th session, as many as a game's (three would fill their indexes of logins).
export const ENTRANTS = Array.from({ length: 10_000 }, (_, i) => ({
  ...DEMO_PLAYERS[0]!,
  ...{ openId: `entrant-${i}`, unionId: `union-entrant-${i}` },
}));
export const playerOf = (index: number): string => ENTRANTS[index % ENTRANTS.length]!.openId;

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

/** {@link sessionIn}, for an answer that must have set one with `status`. */
export function sessionOf(answer: Answer, status: number, what: string): BenchSession {
  const session = sessionIn(answer.headers['set-cookie']);
  if (answer.status !== status || session === undefined)
    throw new Error(`${what} answered ${answer.status}: ${answer.body}`);
  return session;
}

/** What a browser sends when the platform's lobby page (at `lobby.url`) opens the game. */
export const entryHeaders = (lobby: Pick<PlatformSimulator, 'url'>): Record<string, string> => ({
  referer: `${lobby.url}/`,
  'sec-fetch-site': 'same-site',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
});

/** Enters the game through an app's callback with a code issued by the simulator: its answer. */
export async function tryEnter(
  agent: Agent,
  sim: PlatformSimulator,
  port: number,
  openId: string,
  lobby: Pick<PlatformSimulator, 'url'> = sim,
): Promise<{ answer: Answer; session?: BenchSession }> {
  const code = encodeURIComponent(sim.issueCode({ openId, redirectUri: BENCH_REDIRECT_URI }));
  const target = { port, path: `/platform/callback?code=${code}`, headers: entryHeaders(lobby) };
  const answer = await send(agent, target, true);
  const session = answer.status === 303 ? sessionIn(answer.headers['set-cookie']) : undefined;
  return { answer, session };
}

/** {@link tryEnter}, answered 303 with a session. */
export const enter = async (agent: Agent, sim: PlatformSimulator, port: number, openId: string) =>
  sessionOf((await tryEnter(agent, sim, port, openId)).answer, 303, 'entry');

/** Logs in to the session stack alone (the floor, the harness's baseline): a marker in the session, 204. */
export async function loginBaseline(agent: Agent, port: number, openId: string) {
  const path = `/login?openId=${encodeURIComponent(openId)}`;
  return sessionOf(await send(agent, { port, path }, true), 204, 'baseline login');
}

/** Makes a session's token record expired a second ago, as another writer would (compare-and-set). */
export async function expireRecord(store: TokenStore, sessionId: string): Promise<void> {
  const record = await readRecord(store, sessionId);
  if (record === undefined) throw new Error('no token record to expire');
  const accessExpiresAt = Date.now() - 1000;
  const next = { ...record, accessExpiresAt, obtainedAt: accessExpiresAt - 7_200_000 };
  const options = { expectedVersion: record.version, ttlMs: 3_600_000 };
  if (!(await writeRecord(store, sessionId, { ...next, version: record.version + 1 }, options)))
    throw new Error('the token record changed while it was being expired');
}

type NaiveData = { tokens?: { expiresAt: number } };

/** The naive app's session (connect-redis's JSON), and `change` written back when given. */
export async function naiveSession(
  redis: Redis,
  key: string,
  change?: (tokens: { expiresAt: number }) => void,
): Promise<NaiveData | undefined> {
  const stored = await redis.get(key);
  const data = stored === null ? undefined : (JSON.parse(stored) as NaiveData);
  if (change === undefined) return data;
  if (data?.tokens === undefined) throw new Error('no session with tokens to change');
  change(data.tokens);
  await redis.set(key, JSON.stringify(data), 'KEEPTTL');
  return data;
}
