// Refreshes a session's tokens exactly once across all processes: an in-process single-flight map
// plus the store's lock. The lock holder re-reads the record before calling the platform; everyone
// else waits for the new record instead of calling the platform; writes are compare-and-set.
import type { EventEmitter } from 'node:events';
import {
  IdentityChangedError,
  LoginRequiredError,
  PlatformLoginError,
  PlatformMisconfiguredError,
  PlatformUnavailableError,
  ReauthRequiredError,
  StoreUnavailableError,
  TokenEndpointError,
} from '../errors';
import type { LockWaitOutcome, PlatformLoginEvents } from '../observability/events';
import { traceRefresh } from '../observability/tracing';
import { hashSessionId } from './hash';
import type { TokenStore } from './token-store';
import {
  recordTtlMs,
  renewedTokenRecord,
  type ReceivedTokens,
  type TokenRecord,
} from './token-record';

/** What the coordinator needs from the token client. */
export interface Refresher {
  refresh(refreshToken: string): Promise<ReceivedTokens>;
}

/** Settings of the coordinator, computed once from the options. */
export interface RefreshSettings {
  refreshTokenLifetimeMs: number;
  /** Lock lifetime: longer than the slowest refresh the client can make, retries included. */
  lockTtlMs: number;
  /** Longest a request waits for another holder's refresh before giving up. */
  maxWaitMs: number;
  retryAfterSeconds: number;
  /** After a failed refresh, further attempts for that record fail at once for this long. */
  failureCooldownMs: number;
}

/** Cap of the failure memo, so an outage over many sessions cannot grow it without bound. */
const MAX_REMEMBERED_FAILURES = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** Waiters poll the record at 25–75 ms: quick enough to add little latency, jittered so processes spread out. */
const pollDelay = (): number => 25 + Math.random() * 50;
/**
 * With a store that reports changes, a waiter re-reads when the record or lock changes, and at
 * least this often (a change the store could not report, e.g. while its channel was down).
 */
const CHANGE_WAIT_MS = 250;

export class RefreshCoordinator {
  private readonly inFlight = new Map<string, Promise<TokenRecord>>();
  /** Recent failures by session: while the platform is down, one attempt per record and cooldown, not one per request. */
  private readonly recentFailures = new Map<
    string,
    { version: number; until: number; error: PlatformLoginError }
  >();

  constructor(
    private readonly store: TokenStore,
    private readonly client: Refresher,
    private readonly settings: RefreshSettings,
    private readonly events: EventEmitter<PlatformLoginEvents>,
    /** Told how long a request waited for another lock holder, and how the wait ended. */
    private readonly onLockWait?: (durationMs: number, outcome: LockWaitOutcome) => void,
  ) {}

  /**
   * Resolves the session's record after a refresh: one made here, or by another request or process
   * since `seen` was read (its version changed). Rejects with LoginRequiredError,
   * ReauthRequiredError, IdentityChangedError, PlatformMisconfiguredError,
   * PlatformUnavailableError or StoreUnavailableError; tokens are kept except on the reauth errors.
   */
  refresh(sessionId: string, seen: TokenRecord, background = false): Promise<TokenRecord> {
    const running = this.inFlight.get(sessionId);
    if (running) return running;
    const failure = this.recentFailures.get(sessionId);
    if (failure !== undefined) {
      if (failure.version === seen.version && Date.now() < failure.until)
        return Promise.reject(failure.error);
      this.recentFailures.delete(sessionId);
    }
    const started = traceRefresh(background, () => this.run(sessionId, seen, background))
      .catch((error: unknown) => {
        this.rememberFailure(sessionId, seen.version, error);
        throw error;
      })
      .finally(() => this.inFlight.delete(sessionId));
    this.inFlight.set(sessionId, started);
    return started;
  }

  private rememberFailure(sessionId: string, version: number, error: unknown): void {
    // Only platform trouble is worth remembering; a missing login or a store error is re-checked each time.
    if (!(error instanceof PlatformUnavailableError || error instanceof PlatformMisconfiguredError))
      return;
    if (this.recentFailures.size >= MAX_REMEMBERED_FAILURES) {
      const oldest = this.recentFailures.keys().next().value;
      if (oldest !== undefined) this.recentFailures.delete(oldest);
    }
    this.recentFailures.set(sessionId, {
      version,
      until: Date.now() + this.settings.failureCooldownMs,
      error,
    });
  }

  private async run(
    sessionId: string,
    seen: TokenRecord,
    background: boolean,
  ): Promise<TokenRecord> {
    const startedAt = Date.now();
    const deadline = startedAt + this.settings.maxWaitMs;
    let waited = false;
    for (;;) {
      // Asked before the lock attempt, so a change made while that attempt is on its way still wakes it.
      const changed = this.store
        .waitForChange?.(sessionId, Math.max(1, Math.min(CHANGE_WAIT_MS, deadline - Date.now())))
        .catch(() => undefined);
      const owner = await this.store.acquireLock(sessionId, this.settings.lockTtlMs);
      if (owner !== undefined) {
        if (waited) this.onLockWait?.(Date.now() - startedAt, 'took-over');
        try {
          return await this.refreshHoldingLock(sessionId, seen, background, waited);
        } finally {
          // A release that fails only leaves the lock to expire by itself.
          await this.store.releaseLock(sessionId, owner).catch(() => undefined);
        }
      }
      // Another request or process holds the lock: wait for its record instead of calling the platform.
      waited = true;
      await (changed ?? sleep(pollDelay()));
      const current = await this.store.get(sessionId);
      if (current === undefined) {
        this.onLockWait?.(Date.now() - startedAt, 'logged-out');
        throw new LoginRequiredError();
      }
      if (current.version !== seen.version) {
        this.onLockWait?.(Date.now() - startedAt, 'refreshed-elsewhere');
        return current;
      }
      if (Date.now() > deadline) {
        this.onLockWait?.(Date.now() - startedAt, 'gave-up');
        throw new PlatformUnavailableError(
          'Gave up waiting for another process to refresh the tokens.',
          {
            retryAfterSeconds: this.settings.retryAfterSeconds,
          },
        );
      }
    }
  }

  private async refreshHoldingLock(
    sessionId: string,
    seen: TokenRecord,
    background: boolean,
    /** True when this request waited for another holder of the lock first. */
    waited: boolean,
  ): Promise<TokenRecord> {
    const current = await this.store.get(sessionId);
    if (current === undefined) throw new LoginRequiredError();
    // Someone refreshed (or logged in again) since `seen` was read: theirs is the newer record.
    if (current.version !== seen.version) return current;

    const sessionHash = hashSessionId(sessionId);
    const startedAt = Date.now();
    const failed = (failure: PlatformLoginError): PlatformLoginError => {
      this.events.emit('refreshFailed', {
        openId: current.openId,
        sessionHash,
        code: failure.code,
        background,
      });
      return failure;
    };
    // A request that waited for another holder and finds the record unchanged: that holder failed
    // (or died). A failure it recorded is not repeated within the cooldown, so a platform outage
    // costs one attempt, not one per process, and waiters do not sit through a second attempt.
    const cooldownMs = this.settings.failureCooldownMs;
    const failedKey = `refresh-failed:${sessionHash}:${current.version}`;
    // The claim doubles as the check. Half the lock's life at most, so a holder that died (and
    // recorded nothing) leaves no claim behind that would outlive its lock.
    const checkTtlMs = Math.min(cooldownMs, this.settings.lockTtlMs / 2);
    if (waited && cooldownMs > 0 && !(await this.store.claimOnce(failedKey, checkTtlMs))) {
      throw failed(
        new PlatformUnavailableError(
          'Another process has just failed to refresh these tokens; they were kept.',
          {
            retryAfterSeconds: this.settings.retryAfterSeconds,
          },
        ),
      );
    }
    let tokens: ReceivedTokens;
    try {
      tokens = await this.client.refresh(current.refreshToken);
    } catch (error) {
      const failure = await this.classifyFailure(sessionId, current, error);
      // Recorded before the lock is released, for the requests waiting on it in other processes.
      if (cooldownMs > 0 && failure.status === 503) {
        await this.store.claimOnce(failedKey, cooldownMs).catch(() => undefined);
      }
      throw failed(failure);
    }
    if (tokens.openId !== current.openId) {
      // The platform renewed a login for somebody else: never let a session change players silently.
      await this.store.delete(sessionId, { expectedVersion: current.version });
      throw failed(new IdentityChangedError());
    }
    const next = renewedTokenRecord(current, tokens, this.settings.refreshTokenLifetimeMs);
    const written = await this.store.put(sessionId, next, {
      expectedVersion: current.version,
      ttlMs: recordTtlMs(next, Date.now()),
    });
    if (!written) {
      // A login or logout wrote in between (the lock only guards refreshes): the stored record wins.
      const stored = await this.store.get(sessionId);
      if (stored === undefined) throw new LoginRequiredError();
      return stored;
    }
    this.events.emit('refresh', {
      openId: next.openId,
      sessionHash,
      durationMs: Date.now() - startedAt,
      renewed: next.accessToken === current.accessToken ? 'same-token' : 'new-token',
      background,
    });
    return next;
  }

  /** Turns a token-endpoint failure into the answer of the design's failure table. */
  private async classifyFailure(
    sessionId: string,
    current: TokenRecord,
    error: unknown,
  ): Promise<PlatformLoginError> {
    if (error instanceof TokenEndpointError && error.code === 'ERR_PLATFORM_INVALID_GRANT') {
      await this.store.delete(sessionId, { expectedVersion: current.version });
      return new ReauthRequiredError(undefined, { cause: error });
    }
    if (error instanceof TokenEndpointError && error.code === 'ERR_PLATFORM_INVALID_CLIENT') {
      return new PlatformMisconfiguredError(
        'The platform rejected our client credentials while refreshing; check clientId and clientSecret. The tokens were kept.',
        { cause: error },
      );
    }
    if (error instanceof StoreUnavailableError) return error;
    return new PlatformUnavailableError(
      'The platform could not refresh the tokens; they were kept.',
      {
        cause: error,
        retryAfterSeconds: this.settings.retryAfterSeconds,
      },
    );
  }
}
