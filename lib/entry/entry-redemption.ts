// Redeems an entry code: claims it once across all processes, exchanges it at the token endpoint
// (within the process's cap of exchanges in flight), and starts a fresh session whose tokens live
// in the store. A code is never sent twice.
import type { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import {
  codeAlreadyUsed,
  entryRefused,
  LoginRequiredError,
  platformBusy,
  storeUnavailable,
} from '../errors';
import { answerForTokenFailure } from '../core/failure-policy';
import type { PlatformLoginEvents } from '../observability/events';
import { hashCode, hashSessionId } from '../core/hash';
import { SESSION_REDIS_KEYS, type LoginSessionWrite, type StoreEngine } from '../core/store-engine';
import type { SessionJoin, SessionRedis } from '../session-store/redis-session-store';
import {
  newTokenRecord,
  recordTtlMs,
  type ReceivedTokens,
  type TokenRecord,
} from '../core/token-record';
import { landAt } from './cookie-check';
import { sessionCall } from '../http/require-session';
import { joinPlayer } from '../core/player-join';
import { sessionTtlMsOf } from '../core/session-lifetime';
import type { CodeClaim } from './entry-claim';
import type { EntrySettings } from './entry-options';

/**
 * The app's `afterLogin` hook, bound to the package's parts: resolves `false` to refuse the entry.
 * Called with the new session's key and record once the session holds the login.
 */
export type AfterLogin = (
  req: Request,
  res: Response,
  sessionKey: string,
  record: TokenRecord,
  ttlMs: number,
) => Promise<boolean>;

/** What redemption works with. */
export interface RedemptionDeps {
  store: StoreEngine;
  exchangeCode: (code: string) => Promise<ReceivedTokens>;
  /** The registration this entry serves, as its records carry it (absent: the first). */
  registration?: string | undefined;
  /** Several registrations: a login joins its player's unionid index (core/player-join.ts). */
  joinsPlayers?: boolean | undefined;
  events: EventEmitter<PlatformLoginEvents>;
  afterLogin?: AfterLogin | undefined;
}

const STARTING = 'starting the new session';

/**
 * Builds the redemption of one callback: redeems `code` for the browser of `req`, claimed by
 * `claim`, and answers 303 to `successRedirect`, or throws.
 */
export function createCodeRedemption(
  settings: EntrySettings['redemption'],
  deps: RedemptionDeps,
  successRedirect: string,
): (req: Request, res: Response, code: string, claim: CodeClaim) => Promise<void> {
  const { store, events } = deps;
  const { refreshTokenLifetimeMs, sessionTtlMs } = settings;
  /** Code exchanges this process has waiting on the platform: `maxExchangesInFlight` at most. */
  let exchangesInFlight = 0;

  /** The tokens for `code`, or `undefined` when this very browser repeats its own entry. */
  const claimAndExchange = async (
    req: Request,
    code: string,
    codeHash: string,
    claim: CodeClaim,
  ) => {
    // The login generation is read with the claim, before the exchange (the player is not known
    // before it): a logoutPlayer() of the player that comes while the code is being exchanged wins
    // over this entry (see put).
    const loginGeneration = await claim.claim(codeHash);
    if (loginGeneration === undefined) {
      // A reload or the back button repeats the entry that made this very session: land again.
      const sessionKey = hashSessionId(req.sessionID);
      const sameBrowser =
        req.session.platformLogin?.entry === codeHash &&
        (await store.records.get(sessionKey)).status === 'found';
      events.emit('codeReplay', { sessionHash: sessionKey, sameBrowser });
      if (sameBrowser) return undefined;
      throw codeAlreadyUsed();
    }
    try {
      return { tokens: await deps.exchangeCode(code), loginGeneration };
    } catch (error) {
      // Platform trouble keeps the client's own 502/504 (no Retry-After figure applies here).
      throw answerForTokenFailure(error, 'authorization_code', 0);
    }
  };

  /**
   * Writes the new login of the regenerated session: the record (with the entry's count given back
   * where the store can: TokenStore `logins`), then the session. With a `join` the session store
   * hands its write of the session to the record's: one store call; without, each its own store's.
   */
  const writeLogin = async (
    req: Request,
    join: SessionJoin | undefined,
    claim: CodeClaim,
    entry: { tokens: ReceivedTokens; codeHash: string; loginGeneration: string },
  ) => {
    const sessionKey = hashSessionId(req.sessionID);
    const record = newTokenRecord(entry.tokens, refreshTokenLifetimeMs, deps.registration);
    const ttlMs = recordTtlMs(record, Date.now(), sessionTtlMsOf(req.session, sessionTtlMs));
    const { loginGeneration } = entry;
    const logins = store.logins;
    const giveBack = logins && claim.reservation();
    let written: boolean | undefined;
    const put = async (session?: LoginSessionWrite): Promise<boolean> => {
      written =
        logins === undefined
          ? await store.records.put(sessionKey, record, {
              expectedVersion: null,
              ttlMs,
              loginGeneration,
            })
          : await logins.put({ sessionKey, record, ttlMs, loginGeneration, giveBack, session });
      if (written && giveBack !== undefined) claim.gaveBack();
      return written;
    };
    if (join !== undefined) join.writeWith(req.sessionID, put);
    else await put();
    if (written !== false) {
      req.session.platformLogin = {
        openId: record.openId,
        ...(record.registration === undefined ? {} : { registration: record.registration }),
        entry: entry.codeHash,
        recordExpiresAt: Date.now() + ttlMs,
      };
      try {
        await sessionCall(req, 'save', STARTING);
      } catch (error) {
        // A joined record's write failed (Redis, not the session store as such): its own error.
        throw join?.error ?? error;
      }
    }
    // The session store wrote the session without handing its write over: no record was written.
    if (written === undefined) throw storeUnavailable({ store: 'session store', what: STARTING });
    // false: logoutPlayer() ran for this player while the entry was under way; it wins.
    if (!written) {
      delete req.session.platformLogin;
      throw new LoginRequiredError(
        'The player was logged out everywhere while this entry was under way; they must enter again.',
      );
    }
    return { sessionKey, record, ttlMs };
  };

  return async (req, res, code, claim) => {
    const codeHash = hashCode(code);
    const previous = req.session.platformLogin;
    const startedAt = Date.now();
    // A flood of entries cannot open unbounded outbound requests: past the cap, the entry gets
    // what any entry of its address would get first (429, 503), else 503; its code is not claimed.
    if (exchangesInFlight >= settings.maxExchangesInFlight) {
      await claim.refuseFirst();
      throw platformBusy();
    }
    exchangesInFlight += 1;
    const exchanged = await claimAndExchange(req, code, codeHash, claim).finally(
      () => (exchangesInFlight -= 1),
    );
    if (exchanged === undefined) return landAt(res, successRedirect);
    const { tokens, loginGeneration } = exchanged;

    // The browser's old login, whoever it belonged to, ends here: its tokens and its session.
    if (previous !== undefined) await store.records.delete(hashSessionId(req.sessionID));
    // The session store's joined writes, when it shares the token store's client.
    const joins = (req.sessionStore as { [SESSION_REDIS_KEYS]?: SessionRedis })[SESSION_REDIS_KEYS];
    const join =
      joins && store.logins?.sharesClient(joins.client)
        ? joins.join?.(req.sessionID, res)
        : undefined;
    let login: Awaited<ReturnType<typeof writeLogin>>;
    try {
      // A new session id: an id planted before the login is worthless (fixation).
      await sessionCall(req, 'regenerate', STARTING);
      login = await writeLogin(req, join, claim, { tokens, codeHash, loginGeneration });
    } finally {
      await join?.end();
    }
    const { sessionKey, record, ttlMs } = login;
    await joinPlayer(store.records, events, {
      sessionKey,
      record,
      ttlMs,
      before: undefined,
      answered: tokens.unionId,
      via: 'exchange',
      joins: deps.joinsPlayers === true,
    });
    // The record and the session on a replica before the player is answered: a failover now
    // must not take the new login with the primary (docs/durability.md).
    await store.durability?.confirm(sessionKey, { store: req.sessionStore, sid: req.sessionID });
    // The app's hook refusing the login (`false`) or throwing keeps no login: the record is deleted
    // and the session forgets it before the error is answered.
    const refusal = await deps.afterLogin?.(req, res, sessionKey, record, ttlMs).then(
      (admitted) => (admitted ? undefined : [entryRefused()]),
      (error: unknown) => [error],
    );
    if (refusal !== undefined) {
      await store.records.delete(sessionKey);
      delete req.session.platformLogin;
      await sessionCall(req, 'save', STARTING);
      throw refusal[0];
    }

    const { openId } = record;
    if (previous !== undefined && previous.openId !== openId) {
      events.emit('identitySwitch', {
        previousOpenId: previous.openId,
        openId,
        sessionHash: sessionKey,
      });
    }
    events.emit('login', { openId, sessionHash: sessionKey, durationMs: Date.now() - startedAt });
    // The hook may have answered itself (a first-entry page): then it is the answer.
    if (!res.headersSent) landAt(res, successRedirect);
  };
}
