// The router mounted at the redirect_uri path: turns the platform's `?code=` into a fresh session
// whose tokens live in the store. The code is claimed across all processes before it is sent, and
// never sent twice.
import { Router, type Request, type Response } from 'express';
import type { FailHandler } from './fail-handler';
import type { EventEmitter } from 'node:events';
import {
  CodeAlreadyUsedError,
  CodeRejectedError,
  MethodNotAllowedError,
  PlatformMisconfiguredError,
  StoreUnavailableError,
  TokenEndpointError,
} from '../errors';
import type { PlatformLoginEvents } from '../observability/events';
import { hashCode, hashSessionId } from '../core/hash';
import { readEntryCode } from './entry-code';
import { requireSession } from './require-session';
import type { TokenStore } from '../core/token-store';
import { newTokenRecord, recordTtlMs, type ReceivedTokens } from '../core/token-record';

export interface CallbackDeps {
  store: TokenStore;
  exchangeCode: (code: string) => Promise<ReceivedTokens>;
  events: EventEmitter<PlatformLoginEvents>;
  successRedirect: string;
  maxCodeLength: number;
  codeClaimTtlMs: number;
  refreshTokenLifetimeMs: number;
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

/** Maps a failed exchange to its answer; platform trouble keeps its own 502/504. */
function exchangeFailure(error: unknown): unknown {
  if (error instanceof TokenEndpointError && error.code === 'ERR_PLATFORM_INVALID_GRANT') {
    return new CodeRejectedError({ cause: error });
  }
  if (error instanceof TokenEndpointError && error.code === 'ERR_PLATFORM_INVALID_CLIENT') {
    return new PlatformMisconfiguredError(
      'The platform rejected our client credentials at the code exchange; check clientId, clientSecret and redirectUri.',
      { cause: error },
    );
  }
  return error;
}

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
      throw exchangeFailure(error);
    }

    // The browser's old login, whoever it belonged to, ends here: its tokens and its session.
    const oldSessionId = req.sessionID;
    if (previous !== undefined) await store.delete(oldSessionId);
    await regenerate(req); // a new session id: an id planted before the login is worthless (fixation)
    const record = newTokenRecord(tokens, deps.refreshTokenLifetimeMs);
    await store.put(req.sessionID, record, {
      expectedVersion: null,
      ttlMs: recordTtlMs(record, Date.now()),
    });
    req.session.platformLogin = { openId: record.openId, entry: codeHash };
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
