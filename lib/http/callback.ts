// The router mounted at the redirect_uri path: turns the platform's `?code=` into a fresh session
// whose tokens live in the store. The code is claimed across all processes before it is sent, and
// never sent twice.
import { Router, type Request, type Response } from 'express';
import type { FailHandler } from './fail-handler';
import type { EventEmitter } from 'node:events';
import {
  CodeAlreadyUsedError,
  LoginRequiredError,
  MethodNotAllowedError,
  StoreUnavailableError,
} from '../errors';
import type { PlatformLoginEvents } from '../observability/events';
import { hashCode, hashSessionId } from '../core/hash';
import { readEntryCode } from './entry-code';
import { requireSession } from './require-session';
import type { TokenStore } from '../core/token-store';
import { newTokenRecord, recordTtlMs, type ReceivedTokens } from '../core/token-record';
import { answerForTokenFailure } from '../core/failure-policy';

export interface CallbackDeps {
  store: TokenStore;
  exchangeCode: (code: string) => Promise<ReceivedTokens>;
  events: EventEmitter<PlatformLoginEvents>;
  successRedirect: string;
  maxCodeLength: number;
  codeClaimTtlMs: number;
  refreshTokenLifetimeMs: number;
  /** Session lifetime when the session cookie has no `maxAge`; the record never outlives it. */
  sessionTtlMs: number;
  fail: FailHandler;
}

const sessionStoreFailed = (cause: unknown): StoreUnavailableError =>
  new StoreUnavailableError('The session store failed while starting the new session.', { cause });
const regenerate = (req: Request): Promise<void> =>
  new Promise((resolve, reject) =>
    req.session.regenerate((err: unknown) => (err ? reject(sessionStoreFailed(err)) : resolve())),
  );
const save = (req: Request): Promise<void> =>
  new Promise((resolve, reject) =>
    req.session.save((err: unknown) => (err ? reject(sessionStoreFailed(err)) : resolve())),
  );

export function createCallbackRouter(deps: CallbackDeps): Router {
  const { store, events, fail } = deps;

  const landed = (res: Response): void => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.redirect(303, deps.successRedirect);
  };

  async function enter(req: Request, res: Response): Promise<void> {
    // Link previews and prefetchers send HEAD or other methods: they must never burn a code.
    if (req.method !== 'GET') throw new MethodNotAllowedError();
    requireSession(req);
    const code = readEntryCode(req.originalUrl, deps.maxCodeLength);
    const codeHash = hashCode(code);
    const previous = req.session.platformLogin;

    if (!(await store.claimOnce(`code:${codeHash}`, deps.codeClaimTtlMs))) {
      // A reload or the back button repeats the entry that made this very session: land again.
      const sameBrowser =
        previous?.entry === codeHash && (await store.get(req.sessionID)) !== undefined;
      events.emit('codeReplay', { sessionHash: hashSessionId(req.sessionID), sameBrowser });
      if (sameBrowser) return landed(res);
      throw new CodeAlreadyUsedError();
    }

    const startedAt = Date.now();
    let tokens: ReceivedTokens;
    try {
      tokens = await deps.exchangeCode(code);
    } catch (error) {
      // Platform trouble keeps the client's own 502/504 (no Retry-After figure applies here).
      throw answerForTokenFailure(error, 'authorization_code', 0);
    }

    // The browser's old login, whoever it belonged to, ends here: its tokens and its session.
    const oldSessionId = req.sessionID;
    if (previous !== undefined) await store.delete(oldSessionId, { openId: previous.openId });
    await regenerate(req); // a new session id: an id planted before the login is worthless (fixation)
    const record = newTokenRecord(tokens, deps.refreshTokenLifetimeMs);
    const maxAge = req.session.cookie?.originalMaxAge;
    const sessionTtlMs = typeof maxAge === 'number' && maxAge > 0 ? maxAge : deps.sessionTtlMs;
    const ttlMs = recordTtlMs(record, Date.now(), sessionTtlMs);
    // false: logoutPlayer() ran for this player while the entry was under way; it wins.
    if (!(await store.put(req.sessionID, record, { expectedVersion: null, ttlMs }))) {
      throw new LoginRequiredError(
        'The player was logged out everywhere while this entry was under way; they must enter again.',
      );
    }
    req.session.platformLogin = {
      openId: record.openId,
      entry: codeHash,
      recordExpiresAt: Date.now() + ttlMs,
    };
    await save(req);

    const sessionHash = hashSessionId(req.sessionID);
    if (previous !== undefined && previous.openId !== record.openId) {
      events.emit('identitySwitch', {
        previousOpenId: previous.openId,
        openId: record.openId,
        sessionHash,
      });
    }
    events.emit('login', {
      openId: record.openId,
      sessionHash,
      durationMs: Date.now() - startedAt,
    });
    landed(res);
  }

  const router = Router();
  router.all('/', (req, res, next) => {
    enter(req, res).catch((error: unknown) => fail(error, req, res, next));
  });
  return router;
}
