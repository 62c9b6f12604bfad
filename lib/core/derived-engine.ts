// The engine the package works with (store-engine.ts), derived from the public contract a studio's
// own store implements (token-store.ts): records, the player's logins, locks, holds, claims and
// counters, each made of versioned reads and compare-and-set writes. A shipped store carries its
// own engine (STORE_ENGINE), with its fast paths; every other store gets this one.
import { randomBytes } from 'node:crypto';
import { StoreUnavailableError } from '../errors';
import { hashOpenId } from './hash';
import { readRecordValue, recordValue, type RecordKeyRing } from './record-value';
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
  STORE_ENGINE,
  type OneTimeCounters,
  type PlayerLogin,
  type RecordChanges,
  type RecordRead,
  type RefreshLocks,
  type StoreEngine,
  type TokenRecords,
} from './store-engine';
import { checkTokenStore, type StoredValue, type TokenStore } from './token-store';
import type { TokenRecord } from './token-record';
import { isIndexedUnder, playerKeyOf } from './player-key';

/** How long a player's log-out mark is kept: far longer than a code exchange takes. */
const LOGGED_OUT_MEMORY_MS = 3_600_000;
/** How long the login generation lives without a log-out (it is only ever raised). */
const GENERATION_TTL_MS = 366 * 24 * 3_600_000;
/** Compare-and-set rounds before a contended write gives up. */
const MAX_ROUNDS = 64;

/** The engines derived so far: one per store, so every part of an app works with the same one. */
const derived = new WeakMap<TokenStore, { engine: StoreEngine; ring?: RecordKeyRing }>();

/**
 * The engine of `store`: its own when it ships one, else one derived from the contract, sealing
 * records with `ring` (the last ring given for this store, when none is). A store without an
 * engine of its own must have the contract's methods: one that lacks any is refused here, when
 * platformLogin() is created (checkTokenStore), not on a request.
 */
export function engineOf(store: TokenStore, ring?: RecordKeyRing): StoreEngine {
  const own = (store as { [STORE_ENGINE]?: StoreEngine })[STORE_ENGINE];
  if (own !== undefined) return own;
  let made = derived.get(store);
  if (made === undefined || (ring !== undefined && made.ring !== ring)) {
    checkTokenStore(store);
    derived.set(store, (made = { engine: deriveEngine(store, ring), ring }));
  }
  return made.engine;
}

const keys = {
  record: (sessionKey: string) => `t:${sessionKey}`,
  lock: (sessionKey: string) => `l:${sessionKey}`,
  hold: (sessionKey: string) => `h:${sessionKey}`,
  claim: (key: string) => `c:${key}`,
  counter: (key: string) => `n:${key}`,
  player: (openId: string) => `p:${hashOpenId(openId)}`,
  loggedOut: (openId: string) => `o:${hashOpenId(openId)}`,
  generation: 'g',
};

const contended = (what: string): StoreUnavailableError =>
  new StoreUnavailableError(`The token store kept refusing ${what}: too many concurrent writers.`);

/** The engine made of `store`'s contract calls. */
export function deriveEngine(store: TokenStore, ring?: RecordKeyRing): StoreEngine {
  /** The record stored at a session's key, or `undefined` when the value is not one it can read. */
  const decode = (sessionKey: string, stored: StoredValue): TokenRecord | undefined => {
    const read = readRecordValue(stored.value, keys.record(sessionKey), ring);
    return typeof read === 'string' ? undefined : read;
  };

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
      const expectedVersion = current?.version ?? null;
      if (
        (await store.put(key, written.value, { expectedVersion, ttlMs: written.ttlMs })) !==
        undefined
      )
        return;
    }
    throw contended(what);
  }

  /** The player's index: session key → when its record's lifetime ends. */
  const readIndex = (stored: StoredValue | undefined): Record<string, number> => {
    if (stored === undefined) return {};
    try {
      const parsed: unknown = JSON.parse(stored.value);
      return typeof parsed === 'object' && parsed !== null
        ? (parsed as Record<string, number>)
        : {};
    } catch {
      return {};
    }
  };
  const reindex = (openId: string, change: (index: Record<string, number>) => void) =>
    update(keys.player(openId), "a player's logins", (current) => {
      const index = readIndex(current);
      change(index);
      const now = Date.now();
      for (const [sessionKey, expiresAt] of Object.entries(index))
        if (expiresAt <= now) delete index[sessionKey];
      const last = Math.max(0, ...Object.values(index));
      // An empty index lives a moment; the next write of it starts it again.
      return { value: JSON.stringify(index), ttlMs: Math.max(1, last - now) };
    });

  const loggedOutAt = async (openId: string): Promise<number> =>
    Number((await store.get(keys.loggedOut(openId)))?.value ?? 0);

  const records: TokenRecords = {
    async get(sessionKey): Promise<RecordRead> {
      checkSessionKey(sessionKey);
      const stored = await store.get(keys.record(sessionKey));
      if (stored === undefined) return { status: 'absent' };
      const read = readRecordValue(stored.value, keys.record(sessionKey), ring);
      return typeof read === 'string'
        ? { status: 'unreadable', reason: read }
        : { status: 'found', record: read };
    },

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
      let previous: TokenRecord | undefined;
      if (options.expectedVersion !== null) {
        const stored = await store.get(key);
        previous = stored && decode(sessionKey, stored);
        if (previous?.version !== options.expectedVersion) return false;
        expectedVersion = stored!.version;
      }
      const value = recordValue(record, key, ring);
      const written = await store.put(key, value, { expectedVersion, ttlMs });
      if (written === undefined) return false;
      if (previous !== undefined && playerKeyOf(previous) !== player)
        await reindex(playerKeyOf(previous), (index) => delete index[sessionKey]);
      await reindex(player, (index) => (index[sessionKey] = Date.now() + ttlMs));
      // A log-out everywhere that listed the player's logins before this one was indexed did not
      // see it: the login takes itself back.
      if (since !== undefined && (await loggedOutAt(player)) > Number(since)) {
        await store.delete(key, written);
        return false;
      }
      return true;
    },

    async delete(sessionKey, options) {
      checkSessionKey(sessionKey);
      const expectedVersion = options?.expectedVersion;
      checkExpectedVersion(expectedVersion);
      const key = keys.record(sessionKey);
      const stored = await store.get(key);
      if (stored === undefined) return false;
      const record = decode(sessionKey, stored);
      if (expectedVersion !== undefined && record?.version !== expectedVersion) return false;
      // Only the version read may go when one was asked for; else whatever is there now.
      const deleted = await store.delete(
        key,
        expectedVersion === undefined ? undefined : stored.version,
      );
      if (!deleted) return false;
      const openId = options?.openId ?? (record && playerKeyOf(record));
      if (openId !== undefined) await reindex(openId, (index) => delete index[sessionKey]);
      return true;
    },

    async renew(sessionKey, openId, ttlMs) {
      checkSessionKey(sessionKey);
      checkOpenId(openId);
      const lifetimeMs = ttlMilliseconds(ttlMs);
      if (!(await store.renew(keys.record(sessionKey), lifetimeMs))) return false;
      await reindex(openId, (index) => (index[sessionKey] = Date.now() + lifetimeMs));
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
      let deleted = 0;
      for (const { sessionKey } of logins)
        if (await store.delete(keys.record(sessionKey))) deleted += 1;
      await store.delete(keys.player(openId));
      return deleted;
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
      const taken = await store.put(keys.lock(sessionKey), owner, {
        expectedVersion: null,
        ttlMs: lockTtlMs,
      });
      return taken === undefined ? undefined : owner;
    },
    async extend(sessionKey, owner, ttlMs) {
      checkSessionKey(sessionKey);
      const lockTtlMs = ttlMilliseconds(ttlMs);
      const held = await store.get(keys.lock(sessionKey));
      if (held === undefined || held.value !== owner) return false;
      const expectedVersion = held.version;
      return (
        (await store.put(keys.lock(sessionKey), owner, { expectedVersion, ttlMs: lockTtlMs })) !==
        undefined
      );
    },
    async release(sessionKey, owner) {
      checkSessionKey(sessionKey);
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
      if (held === undefined || held.value !== String(version)) return 0;
      return Math.max(0, held.expiresAt - Date.now());
    },
  };

  const counters: OneTimeCounters = {
    async claimOnce(key, ttlMs) {
      checkClaimKey(key);
      const claimTtlMs = ttlMilliseconds(ttlMs);
      const claimed = await store.put(keys.claim(key), '1', {
        expectedVersion: null,
        ttlMs: claimTtlMs,
      });
      return claimed !== undefined;
    },
    async countInWindow(key, increment, windowMs) {
      const windowLengthMs = checkCount(key, increment, windowMs);
      const counterKey = keys.counter(key);
      for (let round = 0; round < MAX_ROUNDS; round += 1) {
        const current = await store.get(counterKey);
        if (current === undefined) {
          if (increment !== 1) return { count: 0, resetInMs: 0 };
          const opened = await store.put(counterKey, '1', {
            expectedVersion: null,
            ttlMs: windowLengthMs,
          });
          if (opened !== undefined) return { count: 1, resetInMs: windowLengthMs };
          continue;
        }
        const count = Number(current.value) || 0;
        // The window does not stretch: a rewrite keeps what is left of it.
        const resetInMs = Math.max(1, current.expiresAt - Date.now());
        if (increment === 0) return { count, resetInMs };
        const next = Math.max(0, count + increment);
        if (next === 0) {
          if (await store.delete(counterKey, current.version)) return { count: 0, resetInMs: 0 };
          continue;
        }
        const expectedVersion = current.version;
        if (
          (await store.put(counterKey, String(next), { expectedVersion, ttlMs: resetInMs })) !==
          undefined
        )
          return { count: next, resetInMs };
      }
      throw contended('a counter');
    },
  };

  const watch = store.watch?.bind(store);
  const changes: RecordChanges | undefined =
    watch === undefined
      ? undefined
      : {
          watch(sessionKey, onChange) {
            checkSessionKey(sessionKey);
            const unwatch = [keys.record(sessionKey), keys.lock(sessionKey)].map((key) =>
              watch(key, onChange),
            );
            return () => unwatch.forEach((stop) => stop());
          },
          live: true,
        };

  return { records, locks, counters, changes };
}
