// Whether token records reach the store sealed, decided once when platformLogin() is created: a
// store of the studio's own without `encryptionKeys` is refused in production and warned about
// elsewhere, as RedisTokenStore without keys is; keys given twice must be the same ring.
import type { TokenStore } from '../core/token-store';
import { invalidOption } from '../errors';
import { MAKE_A_KEY, OWN_KEY_RING, RecordKeyRing, type EncryptionKey } from '../stores/encryption';
import { MemoryTokenStore } from '../core/memory-store';

const IN_THE_CLEAR =
  "platformLogin(): the token store would hold players' tokens in the clear, readable by anyone " +
  'who can read it or its backups. Give platformLogin() `encryptionKeys: [{ id: ' +
  `'k1', key }]\` (${MAKE_A_KEY}) and the package seals each record before the store sees it.`;

/**
 * The key ring platformLogin() seals records with, made of its `encryptionKeys`. Throws a SetupError
 * (`ERR_PLATFORM_INVALID_OPTION`, option `encryptionKeys`) for tokens that would sit in the clear in
 * production, or for keys that would not seal what the app meant; calls `warn` for a store without
 * keys outside production.
 */
export function checkTokenSealing(
  store: TokenStore,
  keys: readonly EncryptionKey[] | undefined,
  warn: (message: string) => void,
): RecordKeyRing | undefined {
  const ring = keys && new RecordKeyRing(keys);
  if (OWN_KEY_RING in store) {
    // RedisTokenStore: the engine seals its records with the store's own keys (checked at its creation).
    const own = (store as { [OWN_KEY_RING]: RecordKeyRing | undefined })[OWN_KEY_RING];
    if (ring === undefined || own?.sameKeys(ring) === true) return ring;
    throw invalidOption(
      own === undefined
        ? 'platformLogin(): `encryptionKeys` does not reach a RedisTokenStore, which seals records ' +
            'itself: give the keys to `new RedisTokenStore({ redis, encryptionKeys })` instead.'
        : "platformLogin(): `encryptionKeys` differs from the RedisTokenStore's own, which seal " +
            'its records: give the keys in one place, `new RedisTokenStore({ redis, encryptionKeys })`.',
      'encryptionKeys',
    );
  }
  // In this process's memory: whoever can read it can read the keys too.
  if (ring !== undefined || store instanceof MemoryTokenStore) return ring;
  if (process.env.NODE_ENV === 'production') {
    throw invalidOption(
      `${IN_THE_CLEAR} NODE_ENV=production refuses a store without keys.`,
      'encryptionKeys',
    );
  }
  warn(IN_THE_CLEAR);
  return undefined;
}
