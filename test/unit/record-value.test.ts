// The value a token record is kept as in a store of the studio's own (core/record-value.ts): what a
// process without the keys, with other keys, or reading an older plain value makes of it.
import { randomBytes } from 'node:crypto';
import { sampleRecord } from 'express-platform-login/testing';
import { readRecordValue, recordValue } from '../../lib/core/record-value';
import { RecordKeyRing } from '../../lib/stores/encryption';

const ring = (id = 'k1') => new RecordKeyRing([{ id, key: randomBytes(32) }]);
const record = sampleRecord(3);

test('a sealed value names no field of the record and opens under its key only', () => {
  const keys = ring();
  const value = recordValue(record, 't:a', keys);
  expect(value).toMatch(/^sealed:[A-Za-z0-9_-]+$/);
  for (const secret of [record.accessToken, record.refreshToken, record.openId, 'accessToken'])
    expect(value).not.toContain(secret);
  expect(readRecordValue(value, 't:a', keys)).toEqual(record);
  expect(readRecordValue(value, 't:b', keys)).toBe('decrypt');
});

test('a process without the keys, or with other ones, reads it as unreadable, never as absent', () => {
  const value = recordValue(record, 't:a', ring('k1'));
  expect(readRecordValue(value, 't:a')).toBe('unknown_key');
  expect(readRecordValue(value, 't:a', ring('k2'))).toBe('unknown_key');
  expect(readRecordValue(value, 't:a', ring('k1'))).toBe('decrypt');
});

test('a plain value, written before keys were given, still reads; one that is no record does not', () => {
  expect(readRecordValue(recordValue(record, 't:a'), 't:a', ring())).toEqual(record);
  expect(readRecordValue('not json', 't:a', ring())).toBe('parse');
  expect(readRecordValue('["x"]', 't:a', ring())).toBe('parse');
  // The same store that has always sealed refuses it: anyone able to write there could plant it.
  expect(readRecordValue(recordValue(record, 't:a'), 't:a', ring(), true)).toBe('decrypt');
});

test('a plain value holds no field names: a record is its fields in order', () => {
  const value = recordValue({ ...record, unionId: 'u-1', registration: 'mini' }, 't:a');
  expect(value).not.toMatch(/accessToken|refreshToken|openId/);
  expect(readRecordValue(value, 't:a')).toEqual({
    ...record,
    unionId: 'u-1',
    registration: 'mini',
  });
});

test('after a rotation the old key, kept second, still opens what it sealed', () => {
  const oldKey = randomBytes(32);
  const value = recordValue(record, 't:a', new RecordKeyRing([{ id: 'old', key: oldKey }]));
  const rotated = new RecordKeyRing([
    { id: 'new', key: randomBytes(32) },
    { id: 'old', key: oldKey },
  ]);
  expect(readRecordValue(value, 't:a', rotated)).toEqual(record);
  expect(recordValue(record, 't:a', rotated)).not.toBe(value);
});
