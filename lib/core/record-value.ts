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

const isString = (value: unknown): value is string => typeof value === 'string';
const isTime = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);

/**
 * A record as JSON without field names (they would be most of a stored record): the fields in this
 * order, the optional ones last.
 */
const fieldsOf = (record: TokenRecord): unknown[] => {
  const fields: unknown[] = [
    record.accessToken,
    record.refreshToken,
    record.accessExpiresAt,
    record.refreshExpiresAt,
    record.openId,
    record.scope,
    record.obtainedAt,
    record.version,
  ];
  if (record.unionId !== undefined || record.registration !== undefined)
    fields.push(record.unionId ?? null);
  if (record.registration !== undefined) fields.push(record.registration);
  return fields;
};

/** The record {@link fieldsOf} wrote, only its known fields; `undefined` when it is not one. */
function recordOf(fields: unknown): TokenRecord | undefined {
  if (!Array.isArray(fields) || fields.length < 8 || fields.length > 10) return undefined;
  const [accessToken, refreshToken, accessExpiresAt, refreshExpiresAt, openId, scope] = fields;
  const [obtainedAt, version, unionId, registration] = fields.slice(6) as unknown[];
  if (
    !isString(accessToken) ||
    !isString(refreshToken) ||
    !isTime(accessExpiresAt) ||
    !isTime(refreshExpiresAt) ||
    !isString(openId) ||
    !Array.isArray(scope) ||
    !scope.every(isString) ||
    !isTime(obtainedAt) ||
    !Number.isSafeInteger(version) ||
    (unionId !== undefined && unionId !== null && !isString(unionId)) ||
    (registration !== undefined && !isString(registration))
  ) {
    return undefined;
  }
  const record: TokenRecord = {
    accessToken,
    refreshToken,
    accessExpiresAt,
    refreshExpiresAt,
    openId,
    scope: [...(scope as string[])],
    version: version as number,
    obtainedAt,
  };
  if (isString(unionId)) record.unionId = unionId;
  if (isString(registration)) record.registration = registration;
  return record;
}

/** The value `record` is written as at `key`: its fields as JSON, sealed when there is a ring. */
export function recordValue(record: TokenRecord, key: string, ring?: RecordKeyRing): string {
  const json = JSON.stringify(fieldsOf(record));
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
    return recordOf(JSON.parse(json)) ?? 'parse';
  } catch {
    return 'parse';
  }
}
