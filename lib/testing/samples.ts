// Values for a store's tests: a session key no other test uses, and a token record with unique
// random tokens (so a test can look for them verbatim in what the store wrote).
import { randomBytes, randomUUID } from 'node:crypto';
import type { TokenRecord } from '../core/token-record';

/** A session key no other test uses (what `hashSessionId(req.sessionID)` gives the store). */
export const newSessionKey = (): string => `contract-${randomUUID()}`;

/** A record with unique random tokens. */
export function sampleRecord(version: number, overrides: Partial<TokenRecord> = {}): TokenRecord {
  const now = Date.now();
  return {
    accessToken: `at-${randomBytes(24).toString('base64url')}`,
    refreshToken: `rt-${randomBytes(24).toString('base64url')}`,
    accessExpiresAt: now + 7_200_000,
    refreshExpiresAt: now + 90 * 86_400_000,
    openId: `open-${randomBytes(8).toString('hex')}`,
    unionId: `union-${randomBytes(8).toString('hex')}`,
    scope: ['user_info', 'SCOPE'],
    version,
    obtainedAt: now,
    ...overrides,
  };
}
