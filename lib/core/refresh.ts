// Refreshes a session's tokens exactly once across all processes: an in-process single-flight map
// plus the store's short lock, kept alive by its owner. The holder re-reads the record before
// calling the platform; everyone else waits for the new record; writes are compare-and-set. A
// request whose token still works waits about a second at most, then goes on with it.
import type { EventEmitter } from 'node:events';
import {
  hasCode,
  identityChanged,
  LoginRequiredError,
  platformUnavailable,
  type PlatformLoginError,
} from '../errors';
import type { LockWaitOutcome, PlatformLoginEvents } from '../observability/events';
import {
  answerForTokenFailure,
  holdsRefreshesBack,
  platformRetryAfterSeconds,
  servesWithCurrentToken,
} from './failure-policy';
import { freshnessOf, freshTest, isUsable } from './freshness';
import type { RefreshSettings } from './refresh-options';
import { traceRefresh } from '../observability/tracing';
import type { RecordRead, StoreEngine } from './store-engine';
import {
  recordTtlMs,
  renewedTokenRecord,
  type ReceivedTokens,
  type TokenRecord,
} from './token-record';
import { joinPlayer } from './player-join';
import { ignore } from '../util/ignore';

/** What the coordinator needs from the token client: the refresh of `record`'s registration. */
export interface Refresher {
  refresh(refreshToken: string, record: TokenRecord): Promise<ReceivedTokens>;
}

/** Longest a request whose access token still works waits for a refresh before going on with it. */
const MAX_WAIT_WITH_USABLE_TOKEN_MS = 1000;
/** How long a rejected refresh token, after a takeover, waits for the former holder's write. */
const ROTATION_GRACE_MS = 1500;
/** Cap of the failure memo, so an outage over many sessions cannot grow it without bound. */
const MAX_REMEMBERED_FAILURES = 10_000;

/** Waiters without change notices poll the record at 25–75 ms, jittered so processes spread out. */
const pollDelay = (): number => 25 + Math.random() * 50;

/** The record of a read; unreadable ends nothing (another process may read it), but this request. */
function recordOf(read: RecordRead): TokenRecord {
  if (read.status !== 'found') throw new LoginRequiredError();
  return read.record;
}

/** Resolves `promise`, or `fallback` after `ms` if it has not settled by then. */
function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(resolve, ms, fallback)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The error of a hold, telling how long is left of it. */
const heldError = (error: PlatformLoginError, leftMs: number): PlatformLoginError =>
  hasCode(error, 'ERR_PLATFORM_UNAVAILABLE')
    ? platformUnavailable(error.message, {
        retryAfterSeconds: Math.max(1, Math.ceil(leftMs / 1000)),
      })
    : error;

/** One refresh attempt under the lock. */
interface RefreshRun {
  background: boolean;
  sessionTtlMs: number;
  /** The lock was taken after waiting on another holder's. */
  tookOver: boolean;
}

interface Flight {
  /** The record once it is durable: on a replica, or kept to be written again (Durability). */
  promise: Promise<TokenRecord>;
  /** The record once written: what a request with a usable token goes on with (docs/durability.md). */
  written: Promise<TokenRecord>;
  startedAt: number;
}

/**
 * With a store whose change notices are live, a waiter re-reads when the record or lock changes,
 * and at least this often (a change the store could not report).
 */
const CHANGE_WAIT_MS = 250;

export class RefreshCoordinator {
  private readonly inFlight = new Map<string, Flight>();
  /** Lock releases of this process still on their way, which its next lock attempt waits for. */
  private readonly releasing = new Map<string, Promise<unknown>>();
  /** Sessions held back after platform trouble: one attempt per hold, not one per request. */
  private readonly heldBack = new Map<
    string,
    { version: number; until: number; error: PlatformLoginError }
  >();
  /** Whether a request goes on with this record as it is, answered synchronously (else forRequest). */
  readonly isFresh: (record: TokenRecord, now: number) => boolean;

  constructor(
    private readonly store: StoreEngine,
    private readonly client: Refresher,
    private readonly settings: RefreshSettings,
    private readonly events: EventEmitter<PlatformLoginEvents>,
    /** Told how long a request waited for another lock holder, and how the wait ended. */
    private readonly onLockWait?: (durationMs: number, outcome: LockWaitOutcome) => void,
  ) {
    this.isFresh = freshTest(settings.freshness);
  }

  /**
   * The record a request goes on with: the one place that decides "serve with the current token".
   * Fresh: as it is. Past the refresh-ahead point: as it is, refreshed in the background. Near
   * expiry: refreshed, but a token that still works waits at most {@link MAX_WAIT_WITH_USABLE_TOKEN_MS}
   * (counted from the start of the refresh) for the new record to be written, never for a replica
   * to hold it, and goes on when the refresh fails on platform trouble. Only an expired token waits
   * for the platform and for the store's durability. Rejects as {@link refresh} does.
   */
  async forRequest(
    sessionKey: string,
    record: TokenRecord,
    sessionTtlMs?: number,
  ): Promise<TokenRecord> {
    const now = Date.now();
    const state = freshnessOf(record, now, this.settings.freshness);
    if (state === 'fresh') return record; // as isFresh()
    if (state === 'refresh-ahead') {
      // Failures are reported through the refreshFailed event; the request has a usable token.
      this.start(sessionKey, record, true, sessionTtlMs).promise.catch(ignore);
      return record;
    }
    const flight = this.start(sessionKey, record, false, sessionTtlMs);
    if (!isUsable(record, now)) return flight.promise;
    const waitMs = flight.startedAt + MAX_WAIT_WITH_USABLE_TOKEN_MS - now;
    try {
      return waitMs > 0 ? await within(flight.written, waitMs, record) : record;
    } catch (error) {
      if (servesWithCurrentToken(error, record, Date.now())) return record;
      throw error;
    }
  }

  /**
   * Resolves the session's record after a refresh: one made here, or by another request or process
   * since `seen` was read (its version changed). Rejects with LoginRequiredError
   * (`LOGIN_REQUIRED`, `REAUTH_REQUIRED`, `IDENTITY_CHANGED`), PlatformError (`MISCONFIGURED`,
   * `UNAVAILABLE`) or StoreUnavailableError; tokens are kept except on the reauth codes.
   */
  refresh(sessionKey: string, seen: TokenRecord, sessionTtlMs?: number): Promise<TokenRecord> {
    return this.start(sessionKey, seen, false, sessionTtlMs).promise;
  }

  private start(
    sessionKey: string,
    seen: TokenRecord,
    background: boolean,
    sessionTtlMs = this.settings.sessionTtlMs,
  ): Flight {
    const running = this.inFlight.get(sessionKey);
    if (running) return running;
    const held = this.heldBack.get(sessionKey);
    if (held !== undefined) {
      const leftMs = held.until - Date.now();
      if (held.version === seen.version && leftMs > 0) {
        const promise = Promise.reject(heldError(held.error, leftMs));
        promise.catch(ignore); // handled: a request with a usable token does not look at it
        return { promise, written: promise, startedAt: 0 };
      }
      this.heldBack.delete(sessionKey);
    }
    // Wrapped, not an event: only a call around the work can make the `epl.refresh` span active.
    const written = traceRefresh(background, () =>
      this.run(sessionKey, seen, background, sessionTtlMs),
    );
    const durability = this.store.durability;
    const promise = (
      durability === undefined
        ? written
        : written.then((record) => durability.settled(sessionKey).then(() => record))
    ).finally(() => this.inFlight.delete(sessionKey));
    // Marks the rejections handled: a request that stopped waiting must not leave them unhandled.
    written.catch(ignore);
    promise.catch(ignore);
    const flight = { promise, written, startedAt: Date.now() };
    this.inFlight.set(sessionKey, flight);
    return flight;
  }

  private async run(
    sessionKey: string,
    seen: TokenRecord,
    background: boolean,
    sessionTtlMs: number,
  ): Promise<TokenRecord> {
    const startedAt = Date.now();
    let waited = false;
    for (;;) {
      // Asked before the lock attempt, so a change made while that attempt is on its way still wakes it.
      const changed = this.changeWithin(
        sessionKey,
        startedAt + this.settings.lockWaitDeadlineMs - Date.now(),
      );
      await this.releasing.get(sessionKey);
      const owner = await this.store.locks.acquire(sessionKey, this.settings.lockTtlMs);
      if (owner !== undefined) {
        if (waited) this.onLockWait?.(Date.now() - startedAt, 'took-over');
        const run = { background, sessionTtlMs, tookOver: waited };
        return this.holdingLock(sessionKey, owner, () =>
          this.refreshHoldingLock(sessionKey, seen, run),
        );
      }
      // Another request or process holds the lock: wait for its record instead of calling the platform.
      waited = true;
      const current = await this.nextRecord(sessionKey, seen, changed).catch((error: unknown) => {
        this.onLockWait?.(Date.now() - startedAt, 'logged-out');
        throw error;
      });
      if (current !== undefined) {
        this.onLockWait?.(Date.now() - startedAt, 'refreshed-elsewhere');
        return current;
      }
      if (Date.now() - startedAt > this.settings.lockWaitDeadlineMs) {
        this.onLockWait?.(Date.now() - startedAt, 'gave-up');
        throw platformUnavailable('Gave up waiting for another process to refresh the tokens.', {
          retryAfterSeconds: this.settings.retryAfterSeconds,
        });
      }
    }
  }

  /**
   * One wait for another holder: the session's record once it changed from `seen`, or `undefined`
   * while it has not (the caller tries the lock again); LoginRequiredError when it is gone.
   */
  private async nextRecord(
    sessionKey: string,
    seen: TokenRecord,
    changed: Promise<void> = this.changeWithin(sessionKey, CHANGE_WAIT_MS),
  ): Promise<TokenRecord | undefined> {
    await changed;
    const current = recordOf(await this.store.records.get(sessionKey));
    return current.version === seen.version ? undefined : current;
  }

  /**
   * Resolves on a live change notice of the session's record or lock, or after `ms` (at most
   * {@link CHANGE_WAIT_MS}); without live notices, after a poll interval. Watching starts at once.
   */
  private changeWithin(sessionKey: string, ms: number): Promise<void> {
    const changes = this.store.changes;
    const live = changes?.live === true;
    const waitMs = Math.max(1, Math.min(live ? CHANGE_WAIT_MS : pollDelay(), ms));
    return new Promise((resolve) => {
      let unwatch: (() => void) | undefined;
      const done = (): void => {
        clearTimeout(timer);
        unwatch?.();
        resolve();
      };
      // Unreferenced: a wait nobody awaits any more (its lock was taken) must not hold the process.
      const timer = setTimeout(done, waitMs);
      timer.unref();
      if (live) unwatch = changes!.watch(sessionKey, done);
    });
  }

  /** Runs `work` holding the lock, renewing it while `work` runs, and releases it afterwards. */
  private async holdingLock<T>(
    sessionKey: string,
    owner: string,
    work: () => Promise<T>,
  ): Promise<T> {
    const { locks } = this.store;
    const lockTtlMs = this.settings.lockTtlMs;
    // Renewed every fifth of its life, so a Redis stall or a starved event loop of most of its
    // lifetime still leaves it held; a holder that dies stops renewing and its lock frees within lockTtlMs.
    const renewal = setInterval(
      () => void locks.extend(sessionKey, owner, lockTtlMs).catch(ignore),
      lockTtlMs / 5,
    );
    renewal.unref();
    try {
      return await work();
    } finally {
      clearInterval(renewal);
      // Not awaited: nobody waits on it. Requests of this process share the finished flight, other
      // processes wake on the record's change (or on the lock's), and a later lock attempt from
      // this process waits for it (a release may be two calls). A release that fails only leaves
      // the lock to expire by itself.
      const release = locks.release(sessionKey, owner).catch(ignore);
      this.releasing.set(sessionKey, release);
      void release.then(() => {
        if (this.releasing.get(sessionKey) === release) this.releasing.delete(sessionKey);
      });
    }
  }

  private async refreshHoldingLock(
    sessionKey: string,
    seen: TokenRecord,
    run: RefreshRun,
  ): Promise<TokenRecord> {
    // The record and any hold on its version, asked together: one round trip on the refresh's path
    // instead of two (the hold only matters when the record is still `seen`).
    const heldMs = this.store.locks.heldMs(sessionKey, seen.version);
    heldMs.catch(ignore); // looked at below only when the record is unchanged
    const current = recordOf(await this.store.records.get(sessionKey));
    // Someone refreshed (or logged in again) since `seen` was read: theirs is the newer record.
    if (current.version !== seen.version) return current;
    // Checked by every holder, so no process calls the platform while it asked us to hold back.
    const held = await heldMs;
    if (held > 0) {
      const failure = platformUnavailable(
        'Another process has just failed to refresh these tokens and the platform asked to wait; they were kept.',
        { retryAfterSeconds: Math.max(1, Math.ceil(held / 1000)) },
      );
      this.remember(sessionKey, current.version, failure, held);
      throw this.reported(sessionKey, current, failure, run.background);
    }
    const startedAt = Date.now();
    let tokens: ReceivedTokens;
    try {
      tokens = await this.client.refresh(current.refreshToken, current);
    } catch (error) {
      return this.settleFailure(sessionKey, current, error, run);
    }
    return this.writeRenewed(sessionKey, current, tokens, { ...run, startedAt });
  }

  /** Turns a failed platform call into the package's answer, after recording what follows from it. */
  private async settleFailure(
    sessionKey: string,
    current: TokenRecord,
    error: unknown,
    run: RefreshRun,
  ): Promise<TokenRecord> {
    const failure = answerForTokenFailure(error, 'refresh_token', this.settings.retryAfterSeconds);
    if (hasCode(failure, 'ERR_PLATFORM_REAUTH_REQUIRED', 'ERR_PLATFORM_IDENTITY_CHANGED')) {
      // Taken over from a holder whose lock lapsed (a Redis stall, a starved process), or just
      // after a failover? The holder may have rotated this refresh token a moment ago and be
      // about to write (back): its record wins.
      if (run.tookOver || this.store.durability?.unsettled === true) {
        const until = Date.now() + ROTATION_GRACE_MS;
        while (Date.now() < until) {
          const newer = await this.nextRecord(sessionKey, current);
          if (newer !== undefined) return newer;
        }
      }
      const options = { expectedVersion: current.version };
      if (!(await this.store.records.delete(sessionKey, options))) {
        const stored = await this.store.records.get(sessionKey);
        if (stored.status === 'found' && stored.record.version !== current.version)
          return stored.record;
      }
    }
    if (holdsRefreshesBack(failure)) {
      const platformSeconds = platformRetryAfterSeconds(error);
      const holdMs =
        platformSeconds === undefined ? this.settings.failureCooldownMs : platformSeconds * 1000;
      if (holdMs > 0) {
        // Recorded before the lock is released, for every process that takes it next.
        await this.store.locks.hold(sessionKey, current.version, holdMs).catch(ignore);
        this.remember(sessionKey, current.version, failure, holdMs);
      }
    }
    throw this.reported(sessionKey, current, failure, run.background);
  }

  private async writeRenewed(
    sessionKey: string,
    current: TokenRecord,
    tokens: ReceivedTokens,
    run: RefreshRun & { startedAt: number },
  ): Promise<TokenRecord> {
    if (tokens.openId !== current.openId) {
      // The platform renewed a login for somebody else: never let a session change players silently.
      await this.store.records.delete(sessionKey, { expectedVersion: current.version });
      throw this.reported(sessionKey, current, identityChanged(), run.background);
    }
    const next = renewedTokenRecord(current, tokens, this.settings.refreshTokenLifetimeMs);
    const ttlMs = recordTtlMs(next, Date.now(), run.sessionTtlMs);
    const written = await this.store.records.put(sessionKey, next, {
      expectedVersion: current.version,
      ttlMs,
    });
    // A login or logout wrote in between (the lock only guards refreshes): the stored record wins.
    if (!written) return recordOf(await this.store.records.get(sessionKey));
    await joinPlayer(this.store.records, this.events, {
      sessionKey,
      record: next,
      ttlMs,
      before: current.unionId,
      answered: tokens.unionId,
      via: 'refresh',
      joins: this.settings.joinsPlayers === true,
    });
    this.events.emit('refresh', {
      openId: next.openId,
      sessionHash: sessionKey,
      durationMs: Date.now() - run.startedAt,
      renewed: next.accessToken === current.accessToken ? 'same-token' : 'new-token',
      background: run.background,
    });
    return next;
  }

  private reported(
    sessionKey: string,
    current: TokenRecord,
    failure: PlatformLoginError,
    background: boolean,
  ): PlatformLoginError {
    this.events.emit('refreshFailed', {
      openId: current.openId,
      registration: current.registration,
      sessionHash: sessionKey,
      code: failure.code,
      background,
    });
    return failure;
  }

  /** Remembers a hold in this process, so its requests do not each ask the store again. */
  private remember(
    sessionKey: string,
    version: number,
    error: PlatformLoginError,
    holdMs: number,
  ): void {
    if (this.heldBack.size >= MAX_REMEMBERED_FAILURES)
      this.heldBack.delete(this.heldBack.keys().next().value!);
    this.heldBack.set(sessionKey, { version, until: Date.now() + holdMs, error });
  }
}
