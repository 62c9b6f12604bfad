// The AES-256-GCM key ring: sealing, opening, binding to the AAD, rotation (its keys are checked by
// the option's schema: redis-store-options.test.ts).
import { randomBytes } from 'node:crypto';
import { RecordKeyRing } from '../../lib/stores/encryption';

const key1 = randomBytes(32);
const key2 = randomBytes(32);
const aad = Buffer.from('epl:{abc}:t|1');
const plaintext = Buffer.from('["access-token-value","refresh-token-value"]');

describe('RecordKeyRing', () => {
  const ring = new RecordKeyRing([{ id: 'k1', key: key1 }]);

  test('opens what it sealed; the ciphertext does not contain the plaintext', () => {
    const sealed = ring.seal(plaintext, aad);
    expect(sealed.includes(Buffer.from('access-token-value'))).toBe(false);
    expect(sealed.subarray(0, 3).toString()).toBe('k1|');
    // id + separator + 16-byte HKDF salt + 12-byte nonce + ciphertext + 16-byte tag
    expect(sealed.length).toBe(3 + 16 + 12 + plaintext.length + 16);
    expect(ring.open(sealed, aad)).toEqual({ plaintext });
  });

  test('a fresh salt (so a fresh key) and nonce per write: the same plaintext seals differently', () => {
    const a = ring.seal(plaintext, aad);
    const b = ring.seal(plaintext, aad);
    expect(a.equals(b)).toBe(false);
    expect(a.subarray(3, 19).equals(b.subarray(3, 19))).toBe(false);
    expect(a.subarray(19, 31).equals(b.subarray(19, 31))).toBe(false);
  });

  test('another AAD (another Redis key or version) does not open', () => {
    const sealed = ring.seal(plaintext, aad);
    expect(ring.open(sealed, Buffer.from('epl:{xyz}:t|1'))).toEqual({ failure: 'decrypt' });
    expect(ring.open(sealed, Buffer.from('epl:{abc}:t|2'))).toEqual({ failure: 'decrypt' });
  });

  test('any flipped byte after the key id, or a truncation, does not open', () => {
    const sealed = ring.seal(plaintext, aad);
    for (let index = 3; index < sealed.length; index += 1) {
      const tampered = Buffer.from(sealed);
      tampered[index] = tampered[index]! ^ 0x01;
      expect(ring.open(tampered, aad)).toEqual({ failure: 'decrypt' });
    }
    expect(ring.open(sealed.subarray(0, 20), aad)).toEqual({ failure: 'decrypt' });
    expect(ring.open(Buffer.from('no separator'), aad)).toEqual({ failure: 'decrypt' });
  });

  test('a key id the ring does not hold is reported as unknown_key', () => {
    const other = new RecordKeyRing([{ id: 'k2', key: key2 }]);
    expect(other.open(ring.seal(plaintext, aad), aad)).toEqual({ failure: 'unknown_key' });
  });

  test('rotation: the first key seals, the older one still opens', () => {
    const rotated = new RecordKeyRing([
      { id: 'k2', key: key2.toString('base64') },
      { id: 'k1', key: key1.toString('base64url') },
    ]);
    expect(rotated.open(ring.seal(plaintext, aad), aad)).toEqual({ plaintext });
    const sealedByNew = rotated.seal(plaintext, aad);
    expect(sealedByNew.subarray(0, 3).toString()).toBe('k2|');
    expect(ring.open(sealedByNew, aad)).toEqual({ failure: 'unknown_key' });
  });
});
