// Refreshes a session's tokens exactly once across all processes: an in-process single-flight map
// plus the store's short lock, kept alive by its owner. The holder re-reads the record before
// calling the platform; everyone else waits for the new record; writes are compare-and-set. A
// request whose token still works waits about a second at most, then goes on with it.
import type { EventEmitter } from 'node:events';
import {
  IdentityChangedError,
  LoginRequiredError,
  PlatformUnavailableError,
  ReauthRequiredError,
  type PlatformLoginError,
} from '../errors';
import type { LockWaitOutcome, PlatformLoginEvents } from '../observability/events';
import {
  answerForTokenFailure,
  holdsRefreshesBack,
  platformRetryAfterSeconds,
  servesWithCurrentToken,
} from './failure-policy';
import { freshnessOf, freshTest, isUsable, type FreshnessPolicy } from './freshness';
import { traceRefresh } from '../observability/tracing';
import { hashSessionId } from './hash';
import type { TokenStore } from './token-store';
import {
  recordTtlMs,
  renewedTokenRecord,
  type ReceivedTokens,
  type TokenRecord,
} from './token-record';
import { ignore } from '../util/ignore';

/** What the coordinator needs from the token client. */
export interface Refresher {
  refresh(refreshToken: string): Promise<ReceivedTokens>;
}

/** Settings of the coordinator, computed once from the options. */
export interface RefreshSettings {
  refreshTokenLifetimeMs: number;
  /** Longest one refresh can take: every attempt of the token client timing out, plus backoff. */
  maxRefreshMs: number;
  /** Lifetime of the refresh lock; its living owner renews it every third of that. */
  lockTtlMs: number;
  retryAfterSeconds: number;
  /** After a failed refresh (without the platform's Retry-After), no process retries for this long. */
  failureCooldownMs: number;
  /** Lifetime of a session when the request does not tell (records never outlive it). */
  sessionTtlMs: number;
  freshness: FreshnessPolicy;
}

/** Longest a request whose access token still works waits for a refresh before going on with it. */
const MAX_WAIT_WITH_USABLE_TOKEN_MS = 1000;
/** How long a rejected refresh token, after a takeover, waits for the former holder's write. */
const ROTATION_GRACE_MS = 1500;
/** Cap of the failure memo, so an outage over many sessions cannot grow it without bound. */
const MAX_REMEMBERED_FAILURES = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** Waiters poll the record at 25–75 ms: quick enough to add little latency, jittered so processes spread out. */
const pollDelay = (): number => 25 + Math.random() * 50;

/** Resolves `promise`, or `fallback` after `ms` if it has not settled by then. */
function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(resolve, ms, fallback)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The error of a hold, telling how long is left of it. */
const heldError = (error: PlatformLoginError, leftMs: number): PlatformLoginError =>
  error instanceof PlatformUnavailableError
    ? new PlatformUnavailableError(error.message, {
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
  promise: Promise<TokenRecord>;
  startedAt: number;
}

/**
 * With a store that reports changes, a waiter re-reads when the record or lock changes, and at
 * least this often (a change the store could not report, e.g. while its channel was down).
 */
const CHANGE_WAIT_MS = 250;

export class RefreshCoordinator {
  private readonly inFlight = new Map<string, Flight>();
  /** Sessions held back after platform trouble: one attempt per hold, not one per request. */
  private readonly heldBack = new Map<
    string,
    { version: number; until: number; error: PlatformLoginError }
  >();
  private readonly lockTtlMs: number;
  private readonly waitDeadlineMs: number;
  /**
   * Whether a request goes on with this record as it is: nothing to refresh, in the background or
   * now. Answered without a promise, so a fresh record held in memory passes a request on
   * synchronously; otherwise {@link forRequest} decides.
   */
  readonly isFresh: (record: TokenRecord, now: number) => boolean;

  constructor(
    private readonly store: TokenStore,
    private readonly client: Refresher,
    private readonly settings: RefreshSettings,
    private readonly events: EventEmitter<PlatformLoginEvents>,
    /** Told how long a request waited for another lock holder, and how the wait ended. */
    private readonly onLockWait?: (durationMs: number, outcome: LockWaitOutcome) => void,
  ) {
    // A store that cannot renew a lock gets one that outlives the slowest refresh instead.
    this.lockTtlMs =
      store.extendLock === undefined ? settings.maxRefreshMs + 1000 : settings.lockTtlMs;
    // Waiters outlast a living holder's slowest refresh, and a dead holder's lock, a little.
    this.waitDeadlineMs = settings.maxRefreshMs + this.lockTtlMs + 1000;
    this.isFresh = freshTest(settings.freshness);
  }

  /**
   * The record a request goes on with: the one place that decides "serve with the current token".
   * Fresh: as it is. Past the refresh-ahead point: as it is, refreshed in the background. Near
   * expiry: refreshed, but a token that still works waits at most {@link MAX_WAIT_WITH_USABLE_TOKEN_MS}
   * (counted from the start of the refresh) and goes on when the refresh fails on platform trouble.
   * Only an expired token waits for the platform. Rejects as {@link refresh} does.
   */
  async forRequest(
    sessionId: string,
    record: TokenRecord,
    sessionTtlMs?: number,
  ): Promise<TokenRecord> {
    const now = Date.now();
    const state = freshnessOf(record, now, this.settings.freshness);
    if (state === 'fresh') return record; // as isFresh()
    if (state === 'refresh-ahead') {
      // Failures are reported through the refreshFailed event; the request has a usable token.
      this.start(sessionId, record, true, sessionTtlMs).promise.catch(ignore);
      return record;
    }
    const flight = this.start(sessionId, record, false, sessionTtlMs);
    if (!isUsable(record, now)) return flight.promise;
    const waitMs = flight.startedAt + MAX_WAIT_WITH_USABLE_TOKEN_MS - now;
    try {
      return waitMs > 0 ? await within(flight.promise, waitMs, record) : record;
    } catch (error) {
      if (servesWithCurrentToken(error, record, Date.now())) return record;
      throw error;
    }
  }

  /**
   * Resolves the session's record after a refresh: one made here, or by another request or process
   * since `seen` was read (its version changed). Rejects with LoginRequiredError,
   * ReauthRequiredError, IdentityChangedError, PlatformMisconfiguredError,
   * PlatformUnavailableError or StoreUnavailableError; tokens are kept except on the reauth errors.
   */
  refresh(sessionId: string, seen: TokenRecord, sessionTtlMs?: number): Promise<TokenRecord> {
    return this.start(sessionId, seen, false, sessionTtlMs).promise;
  }

  private start(
    sessionId: string,
    seen: TokenRecord,
    background: boolean,
    sessionTtlMs = this.settings.sessionTtlMs,
  ): Flight {
    const running = this.inFlight.get(sessionId);
    if (running) return running;
    const held = this.heldBack.get(sessionId);
    if (held !== undefined) {
      const leftMs = held.until - Date.now();
      if (held.version === seen.version && leftMs > 0) {
        const promise = Promise.reject(heldError(held.error, leftMs));
        promise.catch(ignore); // handled: a request with a usable token does not look at it
        return { promise, startedAt: 0 };
      }
      this.heldBack.delete(sessionId);
    }
    const promise = traceRefresh(background, () =>
      this.run(sessionId, seen, background, sessionTtlMs),
    ).finally(() => this.inFlight.delete(sessionId));
    // Marks the rejection handled: a request that stopped waiting must not leave it unhandled.
    promise.catch(ignore);
    const flight = { promise, startedAt: Date.now() };
    this.inFlight.set(sessionId, flight);
    return flight;
  }

  private async run(
    sessionId: string,
    seen: TokenRecord,
    background: boolean,
    sessionTtlMs: number,
  ): Promise<TokenRecord> {
    const startedAt = Date.now();
    let waited = false;
    for (;;) {
      // Asked before the lock attempt, so a change made while that attempt is on its way still wakes it.
      const changed = this.changeWithin(sessionId, startedAt + this.waitDeadlineMs - Date.now());
      const owner = await this.store.acquireLock(sessionId, this.lockTtlMs);
      if (owner !== undefined) {
        if (waited) this.onLockWait?.(Date.now() - startedAt, 'took-over');
        const run = { background, sessionTtlMs, tookOver: waited };
        return this.holdingLock(sessionId, owner, () =>
          this.refreshHoldingLock(sessionId, seen, run),
        );
      }
      // Another request or process holds the lock: wait for its record instead of calling the platform.
      waited = true;
      const current = await this.nextRecord(sessionId, seen, changed).catch((error: unknown) => {
        this.onLockWait?.(Date.now() - startedAt, 'logged-out');
        throw error;
      });
      if (current !== undefined) {
        this.onLockWait?.(Date.now() - startedAt, 'refreshed-elsewhere');
        return current;
      }
      if (Date.now() - startedAt > this.waitDeadlineMs) {
        this.onLockWait?.(Date.now() - startedAt, 'gave-up');
        throw new PlatformUnavailableError(
          'Gave up waiting for another process to refresh the tokens.',
          { retryAfterSeconds: this.settings.retryAfterSeconds },
        );
      }
    }
  }

  /**
   * One wait for another holder: the session's record once it changed from `seen`, or `undefined`
   * while it has not (the caller tries the lock again). Rejects with LoginRequiredError when the
   * record is gone. The waiting lives here alone, so a store that can announce changes can wake it.
   */
  private async nextRecord(
    sessionId: string,
    seen: TokenRecord,
    changed: Promise<void> | undefined = this.changeWithin(sessionId, CHANGE_WAIT_MS),
  ): Promise<TokenRecord | undefined> {
    await (changed ?? sleep(pollDelay()));
    const current = await this.store.get(sessionId);
    if (current === undefined) throw new LoginRequiredError();
    return current.version === seen.version ? undefined : current;
  }

  /** Resolves when the store reports a change of the session's record or lock (at most `ms`); `undefined` for a store that cannot tell. */
  private changeWithin(sessionId: string, ms: number): Promise<void> | undefined {
    return this.store
      .waitForChange?.(sessionId, Math.max(1, Math.min(CHANGE_WAIT_MS, ms)))
      .catch(ignore);
  }

  /** The session's record once another writer replaced `seen`, waiting at most `ms`; else `undefined`. */
  private async recordWrittenWithin(
    sessionId: string,
    seen: TokenRecord,
    ms: number,
  ): Promise<TokenRecord | undefined> {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const current = await this.nextRecord(sessionId, seen);
      if (current !== undefined) return current;
    }
    return undefined;
  }

  /** Runs `work` holding the lock, renewing it while `work` runs, and releases it afterwards. */
  private async holdingLock<T>(
    sessionId: string,
    owner: string,
    work: () => Promise<T>,
  ): Promise<T> {
    const extendLock = this.store.extendLock?.bind(this.store);
    // Renewed every fifth of its life, so a Redis stall or a starved event loop of most of its
    // lifetime still leaves it held; a holder that dies stops renewing and its lock frees within lockTtlMs.
    const renewal =
      extendLock &&
      setInterval(
        () => void extendLock(sessionId, owner, this.lockTtlMs).catch(ignore),
        this.lockTtlMs / 5,
      );
    renewal?.unref();
    try {
      return await work();
    } finally {
      clearInterval(renewal);
      // Not awaited: nobody waits on it. Requests of this process share the finished flight, other
      // processes wake on the record's change (or on the lock's), and a later lock attempt from
      // this process is sent after it on the same connection. A release that fails only leaves
      // the lock to expire by itself.
      this.store.releaseLock(sessionId, owner).catch(ignore);
    }
  }

  private async refreshHoldingLock(
    sessionId: string,
    seen: TokenRecord,
    run: RefreshRun,
  ): Promise<TokenRecord> {
    const { background } = run;
    // The record and any hold on its version, asked together: one round trip on the refresh's path
    // instead of two (the hold only matters when the record is still `seen`).
    const heldMs = this.store.refreshHeldBackMs?.(sessionId, seen.version);
    heldMs?.catch(ignore); // looked at below only when the record is unchanged
    const current = await this.store.get(sessionId);
    if (current === undefined) throw new LoginRequiredError();
    // Someone refreshed (or logged in again) since `seen` was read: theirs is the newer record.
    if (current.version !== seen.version) return current;
    // Checked by every holder, so no process calls the platform while it asked us to hold back.
    this.throwIfHeldBack(sessionId, current, (await heldMs) ?? 0, background);
    const startedAt = Date.now();
    let tokens: ReceivedTokens;
    try {
      tokens = await this.client.refresh(current.refreshToken);
    } catch (error) {
      return this.settleFailure(sessionId, current, error, run);
    }
    return this.writeRenewed(sessionId, current, tokens, { ...run, startedAt });
  }

  /** Rejects when a process recorded a hold for the session (the platform's Retry-After, or a cooldown). */
  private throwIfHeldBack(
    sessionId: string,
    current: TokenRecord,
    heldMs: number,
    background: boolean,
  ): void {
    if (heldMs <= 0) return;
    const failure = new PlatformUnavailableError(
      'Another process has just failed to refresh these tokens and the platform asked to wait; they were kept.',
      { retryAfterSeconds: Math.max(1, Math.ceil(heldMs / 1000)) },
    );
    this.remember(sessionId, current.version, failure, heldMs);
    throw this.reported(sessionId, current, failure, background);
  }

  /** Turns a failed platform call into the package's answer, after recording what follows from it. */
  private async settleFailure(
    sessionId: string,
    current: TokenRecord,
    error: unknown,
    run: RefreshRun,
  ): Promise<TokenRecord> {
    const { background } = run;
    const failure = answerForTokenFailure(error, 'refresh_token', this.settings.retryAfterSeconds);
    if (failure instanceof ReauthRequiredError) {
      // Taken over from a holder whose lock lapsed (a Redis stall, a starved process)? It may have
      // rotated this refresh token a moment ago and be about to write: its record wins.
      const newer = run.tookOver
        ? await this.recordWrittenWithin(sessionId, current, ROTATION_GRACE_MS)
        : undefined;
      if (newer !== undefined) return newer;
      const options = { expectedVersion: current.version, openId: current.openId };
      if (!(await this.store.delete(sessionId, options))) {
        const stored = await this.store.get(sessionId);
        if (stored !== undefined && stored.version !== current.version) return stored;
      }
    }
    const answer = failure as PlatformLoginError;
    if (holdsRefreshesBack(answer)) {
      const platformSeconds = platformRetryAfterSeconds(error);
      const holdMs =
        platformSeconds === undefined ? this.settings.failureCooldownMs : platformSeconds * 1000;
      if (holdMs > 0) {
        // Recorded before the lock is released, for every process that takes it next.
        await this.store.holdBackRefreshes?.(sessionId, current.version, holdMs).catch(ignore);
        this.remember(sessionId, current.version, answer, holdMs);
      }
    }
    throw this.reported(sessionId, current, answer, background);
  }

  private async writeRenewed(
    sessionId: string,
    current: TokenRecord,
    tokens: ReceivedTokens,
    run: RefreshRun & { startedAt: number },
  ): Promise<TokenRecord> {
    if (tokens.openId !== current.openId) {
      // The platform renewed a login for somebody else: never let a session change players silently.
      await this.store.delete(sessionId, {
        expectedVersion: current.version,
        openId: current.openId,
      });
      throw this.reported(sessionId, current, new IdentityChangedError(), run.background);
    }
    const next = renewedTokenRecord(current, tokens, this.settings.refreshTokenLifetimeMs);
    const written = await this.store.put(sessionId, next, {
      expectedVersion: current.version,
      ttlMs: recordTtlMs(next, Date.now(), run.sessionTtlMs),
    });
    if (!written) {
      // A login or logout wrote in between (the lock only guards refreshes): the stored record wins.
      const stored = await this.store.get(sessionId);
      if (stored === undefined) throw new LoginRequiredError();
      return stored;
    }
    this.events.emit('refresh', {
      openId: next.openId,
      sessionHash: hashSessionId(sessionId),
      durationMs: Date.now() - run.startedAt,
      renewed: next.accessToken === current.accessToken ? 'same-token' : 'new-token',
      background: run.background,
    });
    return next;
  }

  private reported(
    sessionId: string,
    current: TokenRecord,
    failure: PlatformLoginError,
    background: boolean,
  ): PlatformLoginError {
    this.events.emit('refreshFailed', {
      openId: current.openId,
      sessionHash: hashSessionId(sessionId),
      code: failure.code,
      background,
    });
    return failure;
  }

  /** Remembers a hold in this process, so its requests do not each ask the store again. */
  private remember(
    sessionId: string,
    version: number,
    error: PlatformLoginError,
    holdMs: number,
  ): void {
    if (this.heldBack.size >= MAX_REMEMBERED_FAILURES) {
      const oldest = this.heldBack.keys().next().value;
      if (oldest !== undefined) this.heldBack.delete(oldest);
    }
    this.heldBack.set(sessionId, { version, until: Date.now() + holdMs, error });
  }
}
