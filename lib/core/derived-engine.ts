// The engine (store-engine.ts, docs/engine.md) derived from the public contract every store
// implements (token-store.ts): versioned reads and compare-and-set writes under the keys of
// store-keys.ts, and a shipped store's fast paths where it has them.
import { randomBytes } from 'node:crypto';
import { StoreUnavailableError } from '../errors';
import { OWN_KEY_RING, readRecordValue, recordValue, type RecordKeyRing } from './record-value';
import {
  checkClaimKey,
  checkCount,
  checkExpectedVersion,
  checkOpenId,
  checkPut,
  checkSessionKey,
  ttlMilliseconds,
} from './engine-arguments';
import {
  STORE_FAST_PATHS,
  type LoginWrites,
  type OneTimeCounters,
  type PlayerLogin,
  type RecordChanges,
  type RecordRead,
  type RefreshLocks,
  type StoreEngine,
  type StoreFastPaths,
  type TokenRecords,
} from './store-engine';
import type { StoredValue, TokenStore } from './token-store';
import { isIndexedUnder, playerKeyOf } from './player-key';
import { MAX_INDEXED_LOGINS, storeKeys as keys } from './store-keys';

/** How long a player's log-out mark is kept: far longer than a code exchange takes. */
const LOGGED_OUT_MEMORY_MS = 3_600_000;
/** How long the login generation lives without a log-out (it is only ever raised). */
const GENERATION_TTL_MS = 366 * 24 * 3_600_000;
/** Compare-and-set rounds before a contended write gives up. */
const MAX_ROUNDS = 64;

const ABSENT: RecordRead = Object.freeze({ status: 'absent' });

/** The engines derived so far: one per store, so every part of an app works with the same one. */
const derived = new WeakMap<TokenStore, { engine: StoreEngine; ring?: RecordKeyRing }>();

/**
 * The engine of `store`, sealing records with `ring` (else the store's own keys, else the last
 * ring given for this store). platformLogin()'s options have refused a store lacking a contract
 * method (tokenStoreProblem).
 */
export function engineOf(store: TokenStore, ring?: RecordKeyRing): StoreEngine {
  const own = (store as { [OWN_KEY_RING]?: RecordKeyRing })[OWN_KEY_RING];
  const sealing = ring ?? own;
  let made = derived.get(store);
  if (made === undefined || (sealing !== undefined && made.ring !== sealing)) {
    const fast = (store as { [STORE_FAST_PATHS]?: StoreFastPaths })[STORE_FAST_PATHS];
    const engine = deriveEngine(store, sealing, fast, own !== undefined);
    derived.set(store, (made = { engine, ring: sealing }));
  }
  return made.engine;
}

const contended = (what: string): StoreUnavailableError =>
  new StoreUnavailableError(`The token store kept refusing ${what}: too many concurrent writers.`);

/** The engine made of `store`'s contract calls, and of `fast`'s where given (none: all derived). */
export function deriveEngine(
  store: TokenStore,
  ring?: RecordKeyRing,
  fast: StoreFastPaths = {},
  /** The store has always sealed its records with its own keys: one in the clear is refused. */
  sealedOnly = false,
): StoreEngine {
  /** Reads of values a store hands out again while unchanged (frozen), decoded once per key. */
  const reads = new WeakMap<StoredValue, { sessionKey: string; read: RecordRead }>();
  const readOf = (sessionKey: string, stored: StoredValue | undefined): RecordRead => {
    if (stored === undefined) return ABSENT;
    const known = reads.get(stored);
    if (known?.sessionKey === sessionKey) return known.read;
    const record = readRecordValue(stored.value, keys.record(sessionKey), ring, sealedOnly);
    if (typeof record === 'string') return { status: 'unreadable', reason: record };
    if (!Object.isFrozen(stored)) return { status: 'found', record };
    // Shared by every request served from this value: read-only.
    Object.freeze(record.scope);
    const read = Object.freeze({ status: 'found' as const, record: Object.freeze(record) });
    reads.set(stored, { sessionKey, read });
    return read;
  };
  /** The record stored at a session's key, or `undefined` when it cannot be read. */
  const decode = (sessionKey: string, stored: StoredValue) => {
    const read = readOf(sessionKey, stored);
    return read.status === 'found' ? read.record : undefined;
  };
  const { cachedGet, durability } = fast;
  /** Writes `value` at `key` if the stored version is `expectedVersion`: whether it was written. */
  const wrote = async (key: string, value: string, expectedVersion: number | null, ttlMs: number) =>
    (await store.put(key, value, { expectedVersion, ttlMs })) !== undefined;

  /** Rewrites the value at `key` from what is there, until no other writer got there first. */
  async function update(
    key: string,
    what: string,
    next: (current: StoredValue | undefined) => { value: string; ttlMs: number } | undefined,
  ): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const current = await store.get(key);
      const written = next(current);
      if (written === undefined) return;
      if (await wrote(key, written.value, current?.version ?? null, written.ttlMs)) return;
    }
    throw contended(what);
  }

  /** The player's index: session key → when its record's lifetime ends. */
  const readIndex = (stored: StoredValue | undefined): Record<string, number> => {
    const index: Record<string, number> = {};
    let parsed: unknown;
    try {
      parsed = stored && JSON.parse(stored.value);
    } catch {
      return index;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return index;
    for (const [sessionKey, expiresAt] of Object.entries(parsed))
      if (Number.isFinite(expiresAt)) index[sessionKey] = expiresAt as number;
    return index;
  };
  /** Takes the oldest entries beyond MAX_INDEXED_LOGINS out of `index` (never `kept`'s). */
  const overflow = (index: Record<string, number>, kept: string | undefined): string[] => {
    const beyond = Object.keys(index).length - MAX_INDEXED_LOGINS;
    if (beyond <= 0) return [];
    const oldest = Object.entries(index)
      .filter(([sessionKey]) => sessionKey !== kept)
      .sort((a, b) => a[1] - b[1])
      .slice(0, beyond)
      .map(([sessionKey]) => sessionKey);
    for (const sessionKey of oldest) delete index[sessionKey];
    return oldest;
  };
  /** Rewrites a player's index; a login it no longer has room for ends (endLogins). */
  const reindex = async (
    openId: string,
    change: (index: Record<string, number>) => void,
    kept?: string,
  ): Promise<void> => {
    let ended: string[] = [];
    await update(keys.player(openId), "a player's logins", (current) => {
      const index = readIndex(current);
      change(index);
      const now = Date.now();
      for (const [sessionKey, expiresAt] of Object.entries(index))
        if (expiresAt <= now) delete index[sessionKey];
      ended = overflow(index, kept);
      const last = Math.max(0, ...Object.values(index));
      // An empty index lives a moment; the next write of it starts it again.
      return { value: JSON.stringify(index), ttlMs: Math.max(1, last - now) };
    });
    await endLogins(ended);
  };
  /**
   * Ends logins as a log-out does: their records go, and stay gone through a failover. What made
   * room for them is written by then, so a store failure here fails nothing: the login it spared
   * lives out its lifetime, as before the bound.
   */
  const endLogins = async (sessionKeys: readonly string[]): Promise<void> => {
    if (sessionKeys.length === 0) return;
    const deleted: string[] = [];
    try {
      for (const sessionKey of sessionKeys)
        if (await store.delete(keys.record(sessionKey))) deleted.push(sessionKey);
      await durability?.loggedOut(deleted);
    } catch {
      // Not the new write's failure, so not its caller's: a store that fails fails its next call too.
    }
  };

  const loggedOutAt = async (openId: string): Promise<number> =>
    Number((await store.get(keys.loggedOut(openId)))?.value ?? 0);

  const records: TokenRecords = {
    async get(sessionKey): Promise<RecordRead> {
      checkSessionKey(sessionKey);
      return readOf(sessionKey, await store.get(keys.record(sessionKey)));
    },

    cachedRead:
      cachedGet &&
      ((sessionKey) => {
        if (typeof sessionKey !== 'string' || sessionKey === '') return undefined;
        const stored = cachedGet(keys.record(sessionKey));
        return stored && readOf(sessionKey, stored);
      }),

    async put(sessionKey, record, options) {
      checkSessionKey(sessionKey);
      checkPut(record, options);
      const ttlMs = ttlMilliseconds(options.ttlMs);
      const key = keys.record(sessionKey);
      const since = options.expectedVersion === null ? options.loginGeneration : undefined;
      // Logged out everywhere after this login's entry began: the log-out wins.
      const player = playerKeyOf(record);
      if (since !== undefined && (await loggedOutAt(player)) > Number(since)) return false;
      let expectedVersion: number | null = null;
      if (options.expectedVersion !== null) {
        const stored = await store.get(key);
        if (stored === undefined || decode(sessionKey, stored)?.version !== options.expectedVersion)
          return false;
        expectedVersion = stored.version;
      }
      const value = recordValue(record, key, ring);
      const written = await store.put(key, value, { expectedVersion, ttlMs });
      if (written === undefined) return false;
      await reindex(player, (index) => (index[sessionKey] = Date.now() + ttlMs), sessionKey);
      // A log-out everywhere that listed the player's logins before this one was indexed did not
      // see it: the login takes itself back.
      if (since !== undefined && (await loggedOutAt(player)) > Number(since)) {
        await store.delete(key, written);
        return false;
      }
      return true;
    },

    // The player's index keeps the session until its entry ends: loginsOf() skips an entry
    // whose record is gone, so a delete is one call.
    async delete(sessionKey, options) {
      checkSessionKey(sessionKey);
      const expectedVersion = options?.expectedVersion;
      checkExpectedVersion(expectedVersion);
      const key = keys.record(sessionKey);
      // With a version, only the version read may go.
      const stored = expectedVersion === undefined ? undefined : await store.get(key);
      const deleted =
        expectedVersion === undefined
          ? await store.delete(key)
          : stored !== undefined &&
            decode(sessionKey, stored)?.version === expectedVersion &&
            (await store.delete(key, stored.version));
      // Answered once a replica holds it, even when asked again (docs/durability.md).
      if (options?.logout === true) await durability?.loggedOut([sessionKey]);
      return deleted;
    },

    async renew(sessionKey, openId, ttlMs) {
      checkSessionKey(sessionKey);
      checkOpenId(openId);
      const lifetimeMs = ttlMilliseconds(ttlMs);
      if (!(await store.renew(keys.record(sessionKey), lifetimeMs))) return false;
      await reindex(openId, (index) => (index[sessionKey] = Date.now() + lifetimeMs), sessionKey);
      return true;
    },

    async loginsOf(openId) {
      checkOpenId(openId);
      const index = readIndex(await store.get(keys.player(openId)));
      const logins: PlayerLogin[] = [];
      for (const sessionKey of Object.keys(index)) {
        const stored = await store.get(keys.record(sessionKey));
        const record = stored && decode(sessionKey, stored);
        if (stored !== undefined && record !== undefined && isIndexedUnder(record, openId))
          logins.push({ sessionKey, expiresAt: stored.expiresAt });
      }
      return logins.sort((a, b) => b.expiresAt - a.expiresAt);
    },

    async deletePlayer(openId) {
      checkOpenId(openId);
      // First the generation: a login of this player that read an older one is refused at its put.
      let generation = 0;
      await update(keys.generation, 'the login generation', (current) => {
        generation = Number(current?.value ?? 0) + 1;
        return { value: String(generation), ttlMs: GENERATION_TTL_MS };
      });
      await update(keys.loggedOut(openId), "a player's log-out", (current) =>
        Number(current?.value ?? 0) >= generation
          ? undefined
          : { value: String(generation), ttlMs: LOGGED_OUT_MEMORY_MS },
      );
      const logins = await records.loginsOf(openId);
      const deleted: string[] = [];
      for (const { sessionKey } of logins)
        if (await store.delete(keys.record(sessionKey))) deleted.push(sessionKey);
      // Only the logins listed leave the index: one written meanwhile stays findable.
      await reindex(openId, (index) =>
        logins.forEach(({ sessionKey }) => delete index[sessionKey]),
      );
      await durability?.loggedOut(deleted, openId);
      return deleted.length;
    },

    async loginGeneration() {
      return (await store.get(keys.generation))?.value ?? '0';
    },
  };

  const locks: RefreshLocks = {
    async acquire(sessionKey, ttlMs) {
      checkSessionKey(sessionKey);
      const lockTtlMs = ttlMilliseconds(ttlMs);
      const owner = randomBytes(16).toString('base64url');
      return (await wrote(keys.lock(sessionKey), owner, null, lockTtlMs)) ? owner : undefined;
    },
    async extend(sessionKey, owner, ttlMs) {
      checkSessionKey(sessionKey);
      const lockTtlMs = ttlMilliseconds(ttlMs);
      if (fast.renewIfValue) return fast.renewIfValue(keys.lock(sessionKey), owner, lockTtlMs);
      const held = await store.get(keys.lock(sessionKey));
      if (held === undefined || held.value !== owner) return false;
      return wrote(keys.lock(sessionKey), owner, held.version, lockTtlMs);
    },
    async release(sessionKey, owner) {
      checkSessionKey(sessionKey);
      if (fast.deleteIfValue) return fast.deleteIfValue(keys.lock(sessionKey), owner);
      const held = await store.get(keys.lock(sessionKey));
      if (held === undefined || held.value !== owner) return false;
      return store.delete(keys.lock(sessionKey), held.version);
    },
    async hold(sessionKey, version, ttlMs) {
      checkSessionKey(sessionKey);
      checkExpectedVersion(version);
      const holdTtlMs = ttlMilliseconds(ttlMs);
      await update(keys.hold(sessionKey), 'a refresh hold', () => ({
        value: String(version),
        ttlMs: holdTtlMs,
      }));
    },
    async heldMs(sessionKey, version) {
      checkSessionKey(sessionKey);
      checkExpectedVersion(version);
      const held = await store.get(keys.hold(sessionKey));
      // A hold without a lifetime (set by hand in the backend) holds nothing, as it would never end.
      if (held === undefined || held.value !== String(version)) return 0;
      return Number.isFinite(held.expiresAt) ? Math.max(0, held.expiresAt - Date.now()) : 0;
    },
  };

  const counters: OneTimeCounters = {
    async claimOnce(key, ttlMs) {
      checkClaimKey(key);
      return wrote(keys.claim(key), '1', null, ttlMilliseconds(ttlMs));
    },
    async countInWindow(key, increment, windowMs) {
      const windowLengthMs = checkCount(key, increment, windowMs);
      const counterKey = keys.counter(key);
      for (let round = 0; round < MAX_ROUNDS; round += 1) {
        const current = await store.get(counterKey);
        if (current === undefined) {
          if (increment !== 1) return { count: 0, resetInMs: 0 };
          if (await wrote(counterKey, '1', null, windowLengthMs))
            return { count: 1, resetInMs: windowLengthMs };
          continue;
        }
        const count = Number(current.value) || 0;
        // The window does not stretch: a rewrite keeps what is left of it (a value without a
        // lifetime, set by hand in the backend, counts as a whole window).
        const resetInMs = Math.min(windowLengthMs, Math.max(1, current.expiresAt - Date.now()));
        if (increment === 0) return { count, resetInMs };
        const next = Math.max(0, count + increment);
        if (next === 0) {
          if (await store.delete(counterKey, current.version)) return { count: 0, resetInMs: 0 };
          continue;
        }
        if (await wrote(counterKey, String(next), current.version, resetInMs))
          return { count: next, resetInMs };
      }
      throw contended('a counter');
    },
  };

  const watch = store.watch?.bind(store);
  const changes: RecordChanges | undefined = watch && {
    watch(sessionKey, onChange) {
      checkSessionKey(sessionKey);
      const unwatch = [keys.record(sessionKey), keys.lock(sessionKey)].map((key) =>
        watch(key, onChange),
      );
      return () => unwatch.forEach((stop) => stop());
    },
    get live() {
      return fast.watchLive?.() ?? true;
    },
  };

  const { beginEntry, putNewLogin, sharesClient } = fast;
  const logins: LoginWrites | undefined = putNewLogin &&
    sharesClient && {
      async put(write) {
        const { sessionKey, record, loginGeneration } = write;
        checkSessionKey(sessionKey);
        checkPut(record, { expectedVersion: null, ttlMs: write.ttlMs, loginGeneration });
        if (write.giveBack !== undefined)
          checkCount(write.giveBack.key, -1, write.giveBack.windowMs);
        const value = recordValue(record, keys.record(sessionKey), ring);
        const ended = await putNewLogin(write, value);
        if (ended === undefined) return false;
        await endLogins(ended);
        return true;
      },
      sharesClient,
    };

  return {
    records,
    locks,
    counters,
    changes,
    entries: beginEntry && { begin: beginEntry },
    logins,
    durability,
  };
}
