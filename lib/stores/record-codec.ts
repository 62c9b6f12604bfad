// The bytes a token record is stored as: `<version>|<mark><body>`. The version leads in plain ASCII
// so the Lua compare-and-set can read it without decrypting; the body is a field-name-free JSON
// array (plain) or its AES-GCM sealed form, which keeps a record small in Redis memory.
import type { TokenRecord } from '../core/token-record';

/** Body mark of a record stored in the clear. */
export const PLAIN_MARK = 0x70; // 'p'
/** Body mark of a record sealed with AES-256-GCM under a ring key itself (older records; still read). */
export const SEALED_MARK = 0x65; // 'e'
/** Body mark of a record sealed with AES-256-GCM under a per-record key derived by HKDF (see encryption.ts). */
export const SEALED_DERIVED_MARK = 0x6b; // 'k'

const SEPARATOR = 0x7c; // '|'
const MAX_VERSION_DIGITS = 16; // Number.MAX_SAFE_INTEGER has 16 digits

/** Serialises everything but the version (which the frame carries) as a compact JSON array. */
export function encodeRecordPayload(record: TokenRecord): Buffer {
  const fields: unknown[] = [
    record.accessToken,
    record.refreshToken,
    record.accessExpiresAt,
    record.refreshExpiresAt,
    record.openId,
    record.scope,
    record.obtainedAt,
  ];
  // Optional fields at the end, so older records (7 or 8 fields) read as the first registration.
  if (record.unionId !== undefined || record.registration !== undefined)
    fields.push(record.unionId ?? null);
  if (record.registration !== undefined) fields.push(record.registration);
  return Buffer.from(JSON.stringify(fields), 'utf8');
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isTime = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);

/**
 * Parses what {@link encodeRecordPayload} wrote; `undefined` when the bytes are not a record
 * (corrupted, or written by something else). Only the known fields are copied out.
 */
export function decodeRecordPayload(payload: Buffer, version: number): TokenRecord | undefined {
  let fields: unknown;
  try {
    fields = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(fields) || fields.length < 7 || fields.length > 9) return undefined;
  const [
    accessToken,
    refreshToken,
    accessExpiresAt,
    refreshExpiresAt,
    openId,
    scope,
    obtainedAt,
    unionId,
    registration,
  ] = fields as unknown[];
  if (
    !isString(accessToken) ||
    !isString(refreshToken) ||
    !isTime(accessExpiresAt) ||
    !isTime(refreshExpiresAt) ||
    !isString(openId) ||
    !Array.isArray(scope) ||
    !scope.every(isString) ||
    !isTime(obtainedAt) ||
    (fields.length === 8 && !isString(unionId)) ||
    (fields.length === 9 && ((unionId !== null && !isString(unionId)) || !isString(registration)))
  ) {
    return undefined;
  }
  const record: TokenRecord = {
    accessToken,
    refreshToken,
    accessExpiresAt,
    refreshExpiresAt,
    openId,
    scope: [...scope],
    version,
    obtainedAt,
  };
  if (isString(unionId)) record.unionId = unionId;
  if (isString(registration)) record.registration = registration;
  return record;
}

/** Builds the stored value: `<version>|` then the mark byte then the body. */
export function frameStoredValue(version: number, mark: number, body: Buffer): Buffer {
  const head = Buffer.from(`${version}|?`, 'latin1');
  head[head.length - 1] = mark;
  return Buffer.concat([head, body]);
}

/** The text the Lua scripts compare a stored value's start with: `<version>|`. */
export const versionPrefix = (version: number): string => `${version}|`;

/** Splits a stored value into version, mark and body; `undefined` when it is not framed. */
export function splitStoredValue(
  value: Buffer,
): { version: number; mark: number; body: Buffer } | undefined {
  const end = value.indexOf(SEPARATOR);
  if (end < 1 || end > MAX_VERSION_DIGITS || end + 1 >= value.length) return undefined;
  const digits = value.toString('latin1', 0, end);
  if (!/^[1-9][0-9]*$/.test(digits)) return undefined;
  const version = Number(digits);
  if (!Number.isSafeInteger(version)) return undefined;
  return { version, mark: value[end + 1]!, body: value.subarray(end + 2) };
}
