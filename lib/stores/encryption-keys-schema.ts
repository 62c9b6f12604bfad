// The `encryptionKeys` option, as platformLogin() and RedisTokenStore both parse it: a ring of named
// 32-byte keys (encryption.ts), each refused when it is not 32 bytes or obviously not random.
import { z } from 'zod';
import { decodeEncryptionKey, KEY_ID_PATTERN, keyPatternProblem, MAKE_A_KEY } from './encryption';

const encryptionKeySchema = z.strictObject({
  id: z.string().regex(KEY_ID_PATTERN, {
    error: 'must be 1–32 characters of A–Z, a–z, 0–9, ".", "_" or "-"',
  }),
  key: z
    .custom<Buffer | string>((value) => decodeEncryptionKey(value) !== undefined, {
      error:
        "must be exactly 32 bytes, as a Buffer or a base64 string (e.g. crypto.randomBytes(32).toString('base64'))",
    })
    .superRefine((value, context) => {
      const problem = keyPatternProblem(decodeEncryptionKey(value)!);
      if (problem !== undefined) {
        context.addIssue({ code: 'custom', message: `is not random (${problem}); ${MAKE_A_KEY}` });
      }
    }),
});

/** At least one key, ids unique; the first seals new writes, every one opens. */
export const encryptionKeysSchema = z
  .array(encryptionKeySchema)
  .min(1, { error: 'must hold at least one key when given' })
  .refine((keys) => new Set(keys.map((key) => key.id)).size === keys.length, {
    error: 'must not repeat a key id',
  });
