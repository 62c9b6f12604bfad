// RedisTokenStore options are checked once, at construction. The client is never connected here.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisTokenStore } from '../../lib/stores/redis-store';
import { SetupError } from '../../lib/errors';

describe('RedisTokenStore options', () => {
  const redis = new Redis({ lazyConnect: true });
  afterAll(() => redis.disconnect());

  test('defaults are accepted, with or without encryption keys', () => {
    expect(() => new RedisTokenStore({ redis })).not.toThrow();
    const key = randomBytes(32);
    expect(
      () =>
        new RedisTokenStore({
          redis,
          prefix: 'game:',
          operationTimeoutMs: 1000,
          maxRecordTtlSeconds: 3600,
          encryptionKeys: [
            { id: 'k2', key: key.toString('base64') },
            { id: 'k1', key },
          ],
        }),
    ).not.toThrow();
  });

  test.each([
    ['a 16-byte key', [{ id: 'k1', key: randomBytes(16) }], /`encryptionKeys\.0\.key`.*32 bytes/],
    ['a short base64 key', [{ id: 'k1', key: 'c2hvcnQ=' }], /`encryptionKeys\.0\.key`/],
    [
      'a key of 64 hex characters (not base64 of 32 bytes)',
      [{ id: 'k1', key: randomBytes(32).toString('hex') }],
      /`encryptionKeys\.0\.key`.*32 bytes/,
    ],
    [
      'a passphrase',
      [{ id: 'k1', key: 'correct horse battery staple' }],
      /`encryptionKeys\.0\.key`/,
    ],
    ['an empty key id', [{ id: '', key: randomBytes(32) }], /`encryptionKeys\.0\.id`/],
    ['a key of two byte values', [{ id: 'k1', key: Buffer.from('ab'.repeat(16)) }], /not random/],
    [
      'a counting key',
      [{ id: 'k1', key: Buffer.from(Array.from({ length: 32 }, (_, i) => i)) }],
      /not random.*openssl rand/,
    ],
    ['an empty ring', [], /`encryptionKeys`/],
    [
      'a repeated key id',
      [
        { id: 'a', key: randomBytes(32) },
        { id: 'a', key: randomBytes(32) },
      ],
      /`encryptionKeys`.*repeat/,
    ],
    ['a key id with "|"', [{ id: 'a|b', key: randomBytes(32) }], /`encryptionKeys\.0\.id`/],
    ['an unknown key field', [{ id: 'a', key: randomBytes(32), alg: 'x' }], /alg/],
  ])('%s is a SetupError naming encryptionKeys', (_label, encryptionKeys, message) => {
    const create = () => new RedisTokenStore({ redis, encryptionKeys: encryptionKeys as never });
    expect(create).toThrow(SetupError);
    expect(create).toThrow(message);
  });

  test.each([
    ['redis', { redis: { get: () => undefined } }],
    ['redis', {}],
    ['prefix', { redis, prefix: 'epl:{x}:' }],
    ['operationTimeoutMs', { redis, operationTimeoutMs: 0 }],
    ['operationTimeoutMs', { redis, operationTimeoutMs: '1500' }],
    ['maxRecordTtlSeconds', { redis, maxRecordTtlSeconds: 1.5 }],
    ['commandTimeout', { redis, commandTimeout: 5 }],
  ])('a wrong or unknown `%s` is a SetupError naming it', (name, options) => {
    expect(() => new RedisTokenStore(options as never)).toThrow(
      expect.objectContaining({ code: 'ERR_PLATFORM_INVALID_OPTION', option: name }),
    );
    expect(() => new RedisTokenStore(options as never)).toThrow(new RegExp(`\`${name}\``));
  });

  test('a bad key is never echoed in the message', () => {
    const key = randomBytes(20).toString('base64');
    expect(() => new RedisTokenStore({ redis, encryptionKeys: [{ id: 'k', key }] })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(key) }),
    );
  });
});
