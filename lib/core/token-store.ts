// The contract a studio's own token store implements: versioned values with a lifetime — read,
// compare-and-set write, delete, renew — and, optionally, change notices. Everything the package
// needs beyond that (token records, the player's logins, refresh locks and holds, one-time claims,
// window counters) it derives from these calls (derived-engine.ts); the shipped stores keep their
// own fast paths as internals this contract does not mention.

/** One stored value, as {@link TokenStore.get} reads it. */
export interface StoredValue {
  /** The value as the package wrote it (it holds tokens: keep it as secret as the tokens). */
  value: string;
  /** Set by the store: 1 at a key's first write, then one more at each write. */
  version: number;
  /** When the value's lifetime ends, epoch milliseconds. */
  expiresAt: number;
}

/** The condition and lifetime of a {@link TokenStore.put}. */
export interface StorePutOptions {
  /** The version the stored value must have for the write to happen; `null`: no value may be stored. */
  expectedVersion: number | null;
  /** How long the written value lives, in milliseconds (at least 1). */
  ttlMs: number;
}

/**
 * Where the package keeps its state: token records (secrets), the player's logins, locks and
 * counters, each under a key of at most 512 characters the package makes. Every method is atomic for
 * its key, rejects when the backend fails or does not answer in time (never hangs), and treats a
 * value past its lifetime as absent. `express-platform-login/testing` holds the suite that checks it.
 */
export interface TokenStore {
  /** The value at `key`, or `undefined` when there is none (never written, deleted, or expired). */
  get(key: string): Promise<StoredValue | undefined>;
  /**
   * Writes `value` at `key` for `ttlMs` when the stored version is `options.expectedVersion` (`null`:
   * nothing stored). Resolves the new version, or `undefined` when the condition did not hold (another
   * writer got there first): the store is unchanged then.
   */
  put(key: string, value: string, options: StorePutOptions): Promise<number | undefined>;
  /**
   * Deletes the value at `key`; with `expectedVersion`, only while it still has that version.
   * Resolves `true` when a value was deleted.
   */
  delete(key: string, expectedVersion?: number): Promise<boolean>;
  /** The value at `key` lives `ttlMs` more from now, unchanged (same version). `false`: none. */
  renew(key: string, ttlMs: number): Promise<boolean>;
  /**
   * Optional: calls `onChange` (possibly spuriously) whenever the value at `key` may have changed
   * in any process; returns an unsubscribe. Without it, a request waiting for another process's
   * refresh polls every 25–75 ms.
   */
  watch?(key: string, onChange: () => void): () => void;
  /** Optional: releases what the store itself created (never a client it was given). */
  close?(): Promise<void>;
}

const REQUIRED = ['get', 'put', 'delete', 'renew'] as const;

/**
 * What is wrong with `store` as a token store, as the options schema says it (option `store`): so a
 * store that cannot serve is refused when `platformLogin()` is created, not on a request.
 */
export function tokenStoreProblem(store: object): string | undefined {
  const methods = store as Record<string, unknown>;
  const missing = REQUIRED.find((method) => typeof methods[method] !== 'function');
  if (missing !== undefined)
    return `is missing \`${missing}()\`: a token store needs get, put, delete and renew. See docs/stores.md`;
  if (methods.watch !== undefined && typeof methods.watch !== 'function')
    return 'is refused: its `watch` is not a function; leave it out to have waiters poll. See docs/stores.md';
  return undefined;
}
