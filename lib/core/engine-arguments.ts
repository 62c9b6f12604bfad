// Checks of the arguments every store engine receives. A wrong argument is a bug in the caller, so
// it is a TypeError, never a StoreUnavailableError that would read as an outage.
import type { TokenRecord } from './token-record';
import type { PutOptions } from './store-engine';

const isVersion = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;

export function checkSessionKey(sessionKey: unknown): asserts sessionKey is string {
  if (typeof sessionKey !== 'string' || sessionKey.length === 0) {
    throw new TypeError('The session key must be a non-empty string.');
  }
}

export function checkOpenId(openId: unknown): asserts openId is string {
  if (typeof openId !== 'string' || openId.length === 0) {
    throw new TypeError('openId must be a non-empty string.');
  }
}

export function checkClaimKey(key: unknown, what = 'claim key'): asserts key is string {
  if (typeof key !== 'string' || key.length === 0 || key.length > 512) {
    throw new TypeError(`The ${what} must be a non-empty string of at most 512 characters.`);
  }
}

/** Checks the arguments of `countInWindow`; resolves the window as whole milliseconds. */
export function checkCount(key: unknown, increment: unknown, windowMs: unknown): number {
  checkClaimKey(key, 'counter key');
  if (increment !== 0 && increment !== 1 && increment !== -1)
    throw new TypeError('`increment` must be -1, 0 or 1.');
  return ttlMilliseconds(windowMs, 'windowMs');
}

/** A time to live as whole milliseconds (Redis PX takes integers); throws unless positive. */
export function ttlMilliseconds(ttlMs: unknown, name = 'ttlMs'): number {
  if (typeof ttlMs !== 'number' || !(ttlMs > 0) || !Number.isFinite(ttlMs)) {
    throw new TypeError(`\`${name}\` must be a positive number of milliseconds.`);
  }
  return Math.ceil(ttlMs);
}

export function checkPut(record: TokenRecord, options: PutOptions): void {
  if (typeof record !== 'object' || record === null || !isVersion(record.version)) {
    throw new TypeError('`record.version` must be a positive integer.');
  }
  if (options?.expectedVersion !== null && !isVersion(options?.expectedVersion)) {
    throw new TypeError('`expectedVersion` must be a positive integer, or null for a new record.');
  }
}

export function checkExpectedVersion(expectedVersion: unknown): void {
  if (expectedVersion !== undefined && !isVersion(expectedVersion)) {
    throw new TypeError('`expectedVersion` must be a positive integer when given.');
  }
}
