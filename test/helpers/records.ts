// Moves a stored login through time, so a test can make its token fresh, due for refresh or expired
// without waiting hours.
import type { Express } from 'express';
import request from 'supertest';
import { MemoryTokenStore, type TokenRecord, type TokenStore } from 'express-platform-login';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { TEST_REDIRECT_URI } from './test-app';
import { sessionIdFrom } from './session-cookie';
import { hashSessionId } from '../../lib/core/hash';
import { engineOf } from '../../lib/core/derived-engine';

const HOUR = 3600_000;

/** The record stored under a session key; `undefined` when absent or unreadable. */
export async function recordAt(
  store: TokenStore,
  sessionKey: string,
): Promise<TokenRecord | undefined> {
  const read = await engineOf(store).records.get(sessionKey);
  return read.status === 'found' ? read.record : undefined;
}

/** The record of a browser's session (by its session id, as the cookie carries it). */
export const storedRecord = (
  store: TokenStore,
  sessionId: string,
): Promise<TokenRecord | undefined> => recordAt(store, hashSessionId(sessionId));

/** Rewrites a session's record (version + 1), as another writer would. */
export async function rewriteRecord(
  store: TokenStore,
  sessionId: string,
  change: (record: TokenRecord) => Partial<TokenRecord>,
): Promise<TokenRecord> {
  const record = await storedRecord(store, sessionId);
  if (!record) throw new Error('no record to rewrite');
  const next = { ...record, ...change(record), version: record.version + 1 };
  await engineOf(store).records.put(hashSessionId(sessionId), next, {
    expectedVersion: record.version,
    ttlMs: HOUR,
  });
  return next;
}

/** The access token has `ms` left (negative: expired that long ago); it was obtained 2 h before expiry. */
export const expiringIn = (ms: number) => (): Partial<TokenRecord> => ({
  accessExpiresAt: Date.now() + ms,
  obtainedAt: Date.now() + ms - 2 * HOUR,
});

/** Enters the game through the callback; resolves the logged-in agent and its session id. */
export async function enter(
  app: Express,
  sim: PlatformSimulator,
  openId = 'player-ada',
): Promise<{ agent: ReturnType<typeof request.agent>; sessionId: string }> {
  const agent = request.agent(app);
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId });
  const res = await agent.get(`/platform/callback?code=${encodeURIComponent(code)}`);
  if (res.status !== 303) throw new Error(`entry failed with ${res.status}: ${res.text}`);
  return { agent, sessionId: sessionIdFrom(res) };
}

/**
 * What a studio writes as its own store: an object with the contract's four methods (here over a
 * MemoryTokenStore), nothing else; the package derives its engine from it.
 */
export function studioStore(inner: TokenStore = new MemoryTokenStore()): TokenStore {
  return {
    get: (key) => inner.get(key),
    put: (key, value, options) => inner.put(key, value, options),
    delete: (key, expectedVersion) => inner.delete(key, expectedVersion),
    renew: (key, ttlMs) => inner.renew(key, ttlMs),
  };
}
