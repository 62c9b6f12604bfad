// The value a token record is kept as in a store without an engine of its own (derived-engine.ts):
// sealed with platformLogin()'s `encryptionKeys` (AES-256-GCM, a per-record key derived by HKDF,
// bound to the store key), so a studio's own store never holds a token in the clear; JSON without
// keys (MemoryTokenStore). docs/stores.md says what a store sees.
import type { UnreadableReason } from './store-engine';
import type { TokenRecord } from './token-record';

/** What seals records: the key ring of platformLogin()'s `encryptionKeys` (stores/encryption.ts). */
export interface RecordKeyRing {
  seal(plaintext: Buffer, aad: Buffer): Buffer;
  open(sealed: Buffer, aad: Buffer): { plaintext: Buffer } | { failure: 'decrypt' | 'unknown_key' };
}

/** Where a store that keeps its own keys (RedisTokenStore) shows its ring to platformLogin(). */
export const OWN_KEY_RING = Symbol.for('express-platform-login.own-key-ring');

/** Starts a sealed value; what follows is the sealed bytes, base64url, so any text column holds it. */
const SEALED = 'sealed:';

/** AAD of a sealed value: its store key, so a value copied under another key does not open. */
const aad = (key: string): Buffer => Buffer.from(`record|${key}`, 'utf8');

const isRecord = (value: unknown): value is TokenRecord => {
  const record = value as Partial<TokenRecord> | null;
  return (
    typeof record === 'object' &&
    record !== null &&
    typeof record.accessToken === 'string' &&
    typeof record.refreshToken === 'string' &&
    typeof record.openId === 'string' &&
    typeof record.version === 'number' &&
    typeof record.accessExpiresAt === 'number' &&
    Array.isArray(record.scope)
  );
};

/** The value `record` is written as at `key`: its JSON, sealed when there is a ring. */
export function recordValue(record: TokenRecord, key: string, ring?: RecordKeyRing): string {
  const json = JSON.stringify(record);
  if (ring === undefined) return json;
  return SEALED + ring.seal(Buffer.from(json, 'utf8'), aad(key)).toString('base64url');
}

/**
 * The record a value at `key` holds, or why it cannot be read. A value in the clear, as written
 * before a ring was given, still reads (it is sealed at its next write) unless `sealedOnly`: a
 * store that has always sealed refuses one, as anyone able to write to it could plant it.
 */
export function readRecordValue(
  value: string,
  key: string,
  ring?: RecordKeyRing,
  sealedOnly = false,
): TokenRecord | UnreadableReason {
  let json = value;
  if (sealedOnly && ring !== undefined && !value.startsWith(SEALED)) return 'decrypt';
  if (value.startsWith(SEALED)) {
    if (ring === undefined) return 'unknown_key';
    const opened = ring.open(Buffer.from(value.slice(SEALED.length), 'base64url'), aad(key));
    if ('failure' in opened) return opened.failure;
    json = opened.plaintext.toString('utf8');
  }
  try {
    const parsed: unknown = JSON.parse(json);
    return isRecord(parsed) ? parsed : 'parse';
  } catch {
    return 'parse';
  }
}
