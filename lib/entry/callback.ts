// The router mounted at the redirect_uri path: one entry flow in which every request that can reach
// a code passes the guards (the setup checks, the embedded cookie-check hop, the entry context),
// then the code's own checks, then redemption, whose first store call holds the failure limit, the
// platform's hold, the budget and the code's claim. Because the guards run inside the flow rather
// than in front of a path, no spelling of the path (`//`, `/CB`, …) skips them.
import { Router, type Request, type Response } from 'express';
import type { FailHandler } from '../http/fail-handler';
import { hasCode, isTokenEndpointAnswer, methodNotAllowed, platformBusy } from '../errors';
import { failedOnItsCode, platformRetryAfterSeconds } from '../core/failure-policy';
import type { PlatformLogger } from '../observability/logger';
import { entryQuery, readEntryCode } from './entry-code';
import { createEntryFailureLimit } from './entry-failure-limit';
import { COOKIE_CHECK_LOCATION, createCookieCheck, isCookieCheck } from './cookie-check';
import { createEntryContextCheck } from './entry-context';
import type { EntrySettings } from './entry-options';
import { createFirstEntryChecks } from '../setup/entry-setup-checks';
import { createExchangeHold } from './entry-exchange-hold';
import { createCodeClaim, type CodeClaim } from './entry-claim';
import { createCodeRedemption, type RedemptionDeps } from './entry-redemption';
import { requireSession } from '../http/require-session';

/** What the callback works with: redemption's parts, and how a failed entry ends. */
export interface CallbackDeps extends RedemptionDeps {
  fail: FailHandler;
  /** The login's logger (the `logger` option, or the default), for the entry's warnings. */
  logger: PlatformLogger;
}

/** The callback router of one PlatformLogin; each part is built from its settings once. */
export function createCallbackRouter(settings: EntrySettings, deps: CallbackDeps): Router {
  const warn = (message: string): void => deps.logger.warn({}, message);
  const { embedded, successRedirect } = settings.guards;
  const entryContext = createEntryContextCheck(settings.guards.context, deps.events, warn);
  const cookieCheck = embedded ? createCookieCheck(successRedirect, deps.events) : undefined;
  const setupChecks = createFirstEntryChecks(warn);
  const failures = createEntryFailureLimit(settings.failureLimit, deps.store.counters, warn);
  const hold = createExchangeHold(deps.store.locks, deps.events);
  // In embedded mode an entry lands on the cookie-check hop first.
  const landing = embedded ? COOKIE_CHECK_LOCATION : successRedirect;
  const claimFor = createCodeClaim(deps.store, failures, hold, settings.claimTtlMs);
  const redeem = createCodeRedemption(settings.redemption, deps, landing);

  async function enter(req: Request, res: Response): Promise<void> {
    // Link previews and prefetchers send HEAD or other methods: they must never burn a code.
    if (req.method !== 'GET') throw methodNotAllowed();
    requireSession(req);
    const params = entryQuery(req.originalUrl);
    setupChecks(req);
    if (cookieCheck !== undefined && isCookieCheck(params)) return cookieCheck(req, res);
    // Every request, with a code or not: what does not pass here neither counts nor reaches a code.
    entryContext(req);
    // Only a code that passed the guards can fail an entry: a request without one (`?x=1`, an
    // <img> on any page) must never count, or any page could lock its visitors' address out.
    const hasCode = params.has('code');
    // An address this process already knows is over its limit is refused with no store call.
    const address = hasCode ? failures?.keyOf(req) : undefined;
    const claim = claimFor(address);
    let code: string;
    try {
      code = readEntryCode(params, settings.maxCodeLength);
    } catch (error) {
      // A malformed code gets what any entry from its address would get first (429, 503).
      if (hasCode) await claim.refuseFirst();
      throw await settleFailure(error, address, claim);
    }
    try {
      await redeem(req, res, code, claim);
    } catch (error) {
      throw await settleFailure(error, address, claim);
    }
    await claim.settle(false, true);
  }

  /** Records what a failed entry means (the hold, the address's count, a probe); resolves its answer. */
  async function settleFailure(
    error: unknown,
    address: string | undefined,
    claim: CodeClaim,
  ): Promise<unknown> {
    const holdSeconds = platformRetryAfterSeconds(error) ?? 0;
    if (holdSeconds > 0) await hold.start(holdSeconds);
    const counted = failedOnItsCode(error);
    // The platform itself answered the exchange (a refusal of the code), rather than this process.
    const answered = hasCode(error, 'ERR_PLATFORM_CODE_REJECTED') || isTokenEndpointAnswer(error);
    await claim.settle(counted, holdSeconds === 0 && counted && answered);
    // A throttled answer counts against the address's limit, but says nothing of its code: it does
    // not stop the address probing the held platform.
    if (address !== undefined && counted)
      await failures!.countFailure(address, claim.reserved, holdSeconds === 0);
    // Throttled: the player is told when to come back, as the entries held after it are.
    return holdSeconds > 0 && !hasCode(error, 'ERR_PLATFORM_CODE_REJECTED')
      ? platformBusy({ platformRetryAfterSeconds: holdSeconds, cause: error })
      : error;
  }

  const router = Router();
  router.all('/', (req, res, next) => {
    enter(req, res).catch((error: unknown) => deps.fail(error, req, res, next));
  });
  return router;
}
