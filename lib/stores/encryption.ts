// Encryption of token records at rest: AES-256-GCM under a ring of named keys. The first key seals
// new writes, every key opens; the caller binds each ciphertext to its Redis key through the AAD.
// Each seal uses its own key, derived from the ring key by HKDF with a random salt kept in the
// record, so the 2^32-seals-per-key limit of random GCM nonces is never approached.
import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import type { RecordKeyRing as SealingRing } from '../core/record-value';

/** One key of the ring: an id stored beside each ciphertext, and 32 bytes (or their base64). */
export interface EncryptionKey {
  /** Stored in each record so the right key opens it: 1–32 of `A–Z a–z 0–9 . _ -`. */
  id: string;
  /** 32 random bytes, as a Buffer or a base64 / base64url string. */
  key: Buffer | string;
}

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const NONCE_BYTES = 12; // 96 bits: the GCM nonce size that needs no extra hashing
const TAG_BYTES = 16;
const SALT_BYTES = 16;
/** HKDF `info`: names what the derived key is for, so it can never serve another purpose. */
const HKDF_INFO = Buffer.from('express-platform-login record key v1', 'latin1');
/** Fewer distinct bytes than this in 32 is not random (32 random bytes have ~30 distinct values). */
const MIN_DISTINCT_KEY_BYTES = 16;
const SEPARATOR = 0x7c; // '|'
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Pattern a key id must match (no `|`, which ends the id in a sealed record). */
export const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,32}$/;

/** The 32 key bytes of `key`, or `undefined` when it is not 32 bytes (or not base64). */
export function decodeEncryptionKey(key: unknown): Buffer | undefined {
  let bytes: Buffer | undefined;
  if (Buffer.isBuffer(key)) bytes = key;
  else if (typeof key === 'string' && BASE64.test(key)) bytes = Buffer.from(key, 'base64');
  return bytes?.length === KEY_BYTES ? bytes : undefined;
}

/**
 * Why 32 key bytes are obviously not random (one byte repeated, very few distinct bytes, a counting
 * sequence), or `undefined` when they look random. Such a key is refused whatever the environment.
 */
export function keyPatternProblem(bytes: Buffer): string | undefined {
  if (new Set(bytes).size < MIN_DISTINCT_KEY_BYTES) return 'it repeats a few byte values';
  const step = (bytes[1]! - bytes[0]! + 256) % 256;
  if (bytes.every((byte, i) => i === 0 || (byte - bytes[i - 1]! + 256) % 256 === step)) {
    return 'its bytes count up or down in equal steps';
  }
  return undefined;
}

/** How to make a good key, for messages. */
export const MAKE_A_KEY =
  "make one with `openssl rand -base64 32` or `crypto.randomBytes(32).toString('base64')`";

export { OWN_KEY_RING } from '../core/record-value';

/** Seals and opens record payloads with a ring of AES-256-GCM keys. */
export class RecordKeyRing implements SealingRing {
  readonly #keys = new Map<string, Buffer>();
  readonly #sealingId: Buffer;
  readonly #sealingBytes: Buffer;

  /** `keys` as the `encryptionKeys` option's schema admits them (encryption-keys-schema.ts). */
  constructor(keys: readonly EncryptionKey[]) {
    for (const { id, key } of keys) this.#keys.set(id, Buffer.from(decodeEncryptionKey(key)!));
    this.#sealingId = Buffer.from(`${keys[0]!.id}|`, 'latin1');
    this.#sealingBytes = this.#keys.get(keys[0]!.id)!;
  }

  /** True when `other` holds the same keys, in the same order: the same ring given twice. */
  sameKeys(other: RecordKeyRing): boolean {
    if (!(#keys in other)) return false; // another copy of the package's ring
    const mine = [...this.#keys];
    const theirs = [...other.#keys];
    return (
      mine.length === theirs.length &&
      mine.every(([id, bytes], i) => id === theirs[i]![0] && bytes.equals(theirs[i]![1]))
    );
  }

  /**
   * `<key id>|<salt><nonce><ciphertext><tag>`, sealed under HKDF-SHA256(ring key, salt), with
   * `aad` authenticated but not stored.
   */
  seal(plaintext: Buffer, aad: Buffer): Buffer {
    const salt = randomBytes(SALT_BYTES);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, deriveKey(this.#sealingBytes, salt), nonce, {
      authTagLength: TAG_BYTES,
    });
    cipher.setAAD(aad);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([this.#sealingId, salt, nonce, ciphertext, cipher.getAuthTag()]);
  }

  /** Opens what {@link seal} produced under the same `aad`; never throws. */
  open(sealed: Buffer, aad: Buffer): ReturnType<SealingRing['open']> {
    const end = sealed.indexOf(SEPARATOR);
    if (end < 1 || end > 32) return { failure: 'decrypt' };
    const ringKey = this.#keys.get(sealed.toString('latin1', 0, end));
    if (ringKey === undefined) return { failure: 'unknown_key' };
    const nonceStart = end + 1 + SALT_BYTES;
    const tagStart = sealed.length - TAG_BYTES;
    if (tagStart < nonceStart + NONCE_BYTES) return { failure: 'decrypt' };
    const key = deriveKey(ringKey, sealed.subarray(end + 1, nonceStart));
    try {
      const decipher = createDecipheriv(
        ALGORITHM,
        key,
        sealed.subarray(nonceStart, nonceStart + NONCE_BYTES),
        { authTagLength: TAG_BYTES },
      );
      decipher.setAAD(aad);
      decipher.setAuthTag(sealed.subarray(tagStart));
      const body = sealed.subarray(nonceStart + NONCE_BYTES, tagStart);
      return { plaintext: Buffer.concat([decipher.update(body), decipher.final()]) };
    } catch {
      return { failure: 'decrypt' };
    }
  }
}

/** The per-record AES key: HKDF-SHA256 of the ring key with the record's salt. */
function deriveKey(ringKey: Buffer, salt: Buffer): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', ringKey, salt, HKDF_INFO, KEY_BYTES)));
}
