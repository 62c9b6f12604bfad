// The stored form of a token record: round trips, compactness, and refusal of anything else.
import fc from 'fast-check';
import {
  decodeRecordPayload,
  encodeRecordPayload,
  frameStoredValue,
  PLAIN_MARK,
  SEALED_MARK,
  splitStoredValue,
} from '../../lib/stores/record-codec';
import type { TokenRecord } from '../../lib/core/token-record';
import { sampleRecord } from 'express-platform-login/testing';

const recordArbitrary: fc.Arbitrary<TokenRecord> = fc.record(
  {
    accessToken: fc.string({ unit: 'binary' }),
    refreshToken: fc.string({ unit: 'binary' }),
    accessExpiresAt: fc.integer({ min: 0, max: 2 ** 45 }),
    refreshExpiresAt: fc.integer({ min: 0, max: 2 ** 45 }),
    openId: fc.string(),
    unionId: fc.string(),
    scope: fc.array(fc.string()),
    version: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    obtainedAt: fc.integer({ min: 0, max: 2 ** 45 }),
  },
  {
    requiredKeys: [
      'accessToken',
      'refreshToken',
      'accessExpiresAt',
      'refreshExpiresAt',
      'openId',
      'scope',
      'version',
      'obtainedAt',
    ],
  },
);

describe('record payload', () => {
  test('any record round-trips, the version coming from the frame', () => {
    fc.assert(
      fc.property(recordArbitrary, (record) => {
        const framed = frameStoredValue(record.version, PLAIN_MARK, encodeRecordPayload(record));
        const frame = splitStoredValue(framed)!;
        expect(frame.version).toBe(record.version);
        expect(frame.mark).toBe(PLAIN_MARK);
        expect(decodeRecordPayload(frame.body, frame.version)).toEqual(record);
      }),
    );
  });

  test('the payload carries no field names and is smaller than the record as JSON', () => {
    const record = sampleRecord(7);
    const payload = encodeRecordPayload(record).toString('utf8');
    expect(payload).not.toContain('accessToken');
    expect(payload.length).toBeLessThan(JSON.stringify(record).length - 100);
  });

  test('anything that is not a payload decodes to undefined', () => {
    const valid = JSON.parse(encodeRecordPayload(sampleRecord(1)).toString('utf8')) as unknown[];
    const variants: unknown[] = [
      'not json',
      { accessToken: 'a' },
      valid.slice(0, 6),
      [...valid, 'extra', 'more'],
      [...valid, 42],
      valid.map((value, index) => (index === 0 ? 42 : value)),
      valid.map((value, index) => (index === 2 ? '1700000000000' : value)),
      valid.map((value, index) => (index === 5 ? 'user_info' : value)),
      valid.map((value, index) => (index === 5 ? [1] : value)),
      valid.map((value, index) => (index === 7 ? null : value)),
    ];
    for (const variant of variants) {
      const bytes = Buffer.from(typeof variant === 'string' ? variant : JSON.stringify(variant));
      expect(decodeRecordPayload(bytes, 1)).toBeUndefined();
    }
  });

  test("a record's registration survives the round trip; older records read as the first", () => {
    const sample = sampleRecord(1);
    const { unionId: _unionId, ...withoutUnion } = sample;
    for (const record of [
      { ...sample, registration: 'mini' },
      { ...withoutUnion, registration: 'mini' },
    ]) {
      expect(decodeRecordPayload(encodeRecordPayload(record), 1)).toEqual(record);
    }
    const older = JSON.parse(encodeRecordPayload(sample).toString('utf8')) as unknown[];
    expect(older).toHaveLength(8);
    expect(decodeRecordPayload(Buffer.from(JSON.stringify(older)), 1)).toEqual(sample);
    expect(
      decodeRecordPayload(Buffer.from(JSON.stringify(older.slice(0, 7))), 1)?.registration,
    ).toBeUndefined();
  });

  test('extra properties of a record are not stored', () => {
    const record = { ...sampleRecord(1), idToken: 'secret-id-token' };
    expect(encodeRecordPayload(record).toString('utf8')).not.toContain('secret-id-token');
  });
});

describe('stored value frame', () => {
  test('starts with the version in ASCII, which is what the Lua scripts compare', () => {
    const framed = frameStoredValue(42, SEALED_MARK, Buffer.from([0, 1, 2]));
    expect(framed.subarray(0, 4).toString('latin1')).toBe('42|e');
    expect(splitStoredValue(framed)).toEqual({
      version: 42,
      mark: SEALED_MARK,
      body: Buffer.from([0, 1, 2]),
    });
  });

  test.each([
    ['no separator', '12345'],
    ['empty version', '|p[]'],
    ['leading zero', '01|p[]'],
    ['zero', '0|p[]'],
    ['not digits', 'x1|p[]'],
    ['no mark', '1|'],
    ['beyond a safe integer', '99999999999999999|p[]'],
  ])('refuses a value with %s', (_label, value) => {
    expect(splitStoredValue(Buffer.from(value, 'latin1'))).toBeUndefined();
  });
});
