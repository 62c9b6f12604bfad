// The events a PlatformLogin emits. Payloads carry the player's openId, a hash of the session id
// and timings — never a token, a code or the raw session id.
import type { TokenAttempt } from '../client/token-client-options';
import type { LogLevel, PlatformErrorCode } from '../errors';

/** Why an entry was judged not to come from the platform. */
export type EntryContextViolationReason =
  /** `Sec-Fetch-Dest` is not a page navigation (an `<img>`, a script, `fetch()`, or an unexpected frame). */
  | 'unexpected-destination'
  /** `Sec-Fetch-Site: none`: the user (or another app) opened the URL directly. */
  | 'direct-navigation'
  /** The `Referer` is a page outside `platformOrigins`. */
  | 'foreign-referer'
  /** A browser sending Fetch Metadata sent no `Referer`: the origin of the entry is hidden. */
  | 'referer-missing'
  /** Neither Fetch Metadata nor `Referer` (a webview, an old browser, or a script). */
  | 'headers-missing';

/** What an `entryContextViolation` event tells: header facts, bounded; never the code or a full URL. */
export interface EntryContextViolation {
  reason: EntryContextViolationReason;
  /** `true` when the entry was answered 403 and its code neither claimed nor sent (`'enforce'` mode, or a sub-resource load in any mode). */
  refused: boolean;
  /** The `Sec-Fetch-Site` value, when it was one of the defined tokens. */
  secFetchSite: string | undefined;
  /** The `Sec-Fetch-Dest` value, when it was a plausible token. */
  secFetchDest: string | undefined;
  /** The origin of the `Referer` (never its path or query), or `'invalid'`. */
  refererOrigin: string | undefined;
}

export const LOCK_WAIT_OUTCOMES = [
  'refreshed-elsewhere',
  'took-over',
  'gave-up',
  'logged-out',
] as const;
/** How a wait for another holder of the refresh lock ended. */
export type LockWaitOutcome = (typeof LOCK_WAIT_OUTCOMES)[number];

/** The token store's operations as `storeCall` and the metric's `operation` label name them (docs/metrics.md). */
export const STORE_OPERATIONS = [
  'get',
  'put',
  'delete',
  'acquireLock',
  'releaseLock',
  'claimOnce',
  'sessionsOf',
  'deletePlayer',
  'extendLock',
  'holdBackRefreshes',
  'refreshHeldBackMs',
  'touch',
  'countInWindow',
  'loginGeneration',
  'beginEntry',
] as const;
export type StoreOperation = (typeof STORE_OPERATIONS)[number];
/** How a call to the token store ended: it answered, or it threw. */
export const STORE_CALL_OUTCOMES = ['ok', 'error'] as const;

/** What a refresh renewed: the same access token with a later expiry, or a new one. */
export const RENEWALS = ['same-token', 'new-token'] as const;
/** Why a stored record could not be read (and was treated as absent). */
export const UNREADABLE_REASONS = ['decrypt', 'parse', 'unknown_key'] as const;

/** A request the package could not serve: answered by it (`handleErrors`) or passed to `next(err)`. */
export interface RequestFailure {
  /**
   * Where: an entry (the callback), another of the package's handlers, the session store in front
   * of them, or a socket's upgrade or handshake (`login.sockets()`).
   */
  part: 'entry' | 'request' | 'session-store' | 'socket';
  method: string;
  /** Path and query, with the values of `code`, tokens and secrets redacted. */
  url: string;
  /** `req.id` (pino-http, express-request-id), else `X-Request-Id`, else a new random id. */
  requestId: string;
  /** The package's code, or `undefined` for an error that is not the package's (a bug or the app's). */
  code: PlatformErrorCode | undefined;
  /** The HTTP status the package answers with; `undefined` for an error that is not the package's. */
  status: number | undefined;
  /** The package's message (never a secret); for any other error only its name. */
  message: string;
  /** The level the package logs it at: its code's (docs/errors.md), `error` for an error not the package's. */
  logLevel: LogLevel;
}

/** Payloads of every event, by name. */
export interface PlatformLoginEvents {
  /** A player entered: the code was exchanged and a fresh session holds the tokens. */
  login: [{ openId: string; sessionHash: string; durationMs: number }];
  /** Tokens were refreshed. `renewed`: same access token with a later expiry, or a new one. */
  refresh: [
    {
      openId: string;
      sessionHash: string;
      durationMs: number;
      renewed: (typeof RENEWALS)[number];
      background: boolean;
    },
  ];
  /**
   * A refresh failed; `code` says why. The request was still served when the token was valid.
   * `registration`: whose credentials the refresh used (absent for the first registration).
   */
  refreshFailed: [
    {
      openId: string;
      registration: string | undefined;
      sessionHash: string;
      code: PlatformErrorCode | 'ERR_UNKNOWN';
      background: boolean;
    },
  ];
  /** A browser holding one player's session entered as another player; the old session was ended. */
  identitySwitch: [{ previousOpenId: string; openId: string; sessionHash: string }];
  /** A code that was already redeemed came back. `sameBrowser`: a reload of the entry, answered without a call. */
  codeReplay: [{ sessionHash: string; sameBrowser: boolean }];
  /**
   * The platform throttled a code exchange (`held: true`, its Retry-After in seconds, capped at
   * 300): entries from addresses with failed or unfinished entries are refused 503 until it ends,
   * others probe the platform one a second. `held: false`: a probe was answered, the hold ended.
   */
  exchangeHold: [{ held: boolean; retryAfterSeconds: number }];
  /** A player logged out. */
  logout: [{ openId: string | undefined; sessionHash: string }];
  /**
   * A login's record reached the end of its life in the store (its refresh token's end: the
   * platform's `refresh_expires_in`, else `refresh.tokenLifetimeSeconds`; or its session's): the
   * request that found it gone was answered 401 `login_required`; sockets closed with 4401.
   */
  loginExpired: [{ openId: string; sessionHash: string }];
  /** Every session of a player was ended by `login.logoutPlayer()`; `sessions` says how many. */
  playerLoggedOut: [{ openId: string; sessions: number }];
  /**
   * A login joined its player across registrations: the token endpoint's answer (at the entry, or a
   * later refresh) carried its first unionid. `registration` is absent for the first registration.
   */
  playerJoined: [
    {
      openId: string;
      registration: string | undefined;
      sessionHash: string;
      via: 'exchange' | 'refresh';
    },
  ];
  /** A refresh answered another unionid than the login's: the first one was kept. */
  unionIdRefused: [{ openId: string; registration: string | undefined; sessionHash: string }];
  /** A stored record could not be decrypted or parsed and was treated as absent. */
  unreadableRecord: [{ sessionHash: string; reason: string }];
  /** An entry did not look like it came from the platform's pages (`entry.context`); never carries the code. */
  entryContextViolation: [EntryContextViolation];
  /** Embedded mode: a browser came back from an entry without its session cookie (diagnostic page shown). */
  cookiesRefused: [{ framed: boolean }];
  /** A request failed or was refused (logged, counted by `code` for entries; see {@link RequestFailure}). */
  requestFailed: [RequestFailure];
  /** One attempt at the token endpoint, retries included (metrics, a span, readiness). */
  tokenAttempt: [TokenAttempt];
  /** A request waited for another holder of the refresh lock; `outcome` says how it ended. */
  lockWait: [{ durationMs: number; outcome: LockWaitOutcome }];
  /** One call that reaches the token store's backend (not a read answered from memory); `outcome: 'error'` when it threw. */
  storeCall: [
    {
      operation: StoreOperation;
      outcome: (typeof STORE_CALL_OUTCOMES)[number];
      durationMs: number;
    },
  ];
}
