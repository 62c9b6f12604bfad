// Entry context: did this entry come from the platform's pages? Judged from Sec-Fetch-Site,
// Sec-Fetch-Dest and Referer before the code is claimed or sent; reported or refused per the mode.
// Sub-resource loads (an <img>, a script, fetch()) are refused in every mode: no page needs them.
import type { IncomingHttpHeaders } from 'node:http';
import type { EventEmitter } from 'node:events';
import type { Request } from 'express';
import { z } from 'zod';
import { entryContextRefused } from '../errors';
import type {
  EntryContextViolation,
  EntryContextViolationReason,
  PlatformLoginEvents,
} from '../observability/events';
import { originOf, single } from '../cross-site/origins';
import type { OptionsSchema } from '../util/parse-options';
import { warnOnce } from '../setup/setup-checks';

const entryContextShape = {
  /**
   * `'off'`: no check (sub-resource loads are refused all the same). `'report'`: an
   * `entryContextViolation` event per suspicious entry, which is still served. `'enforce'`: the
   * event, and the entry is refused with 403 `entry_context_refused` before its code is claimed or
   * sent. Defaults to `'enforce'` when `platformOrigins` is given, else `'report'` (with one
   * start-up warning saying what to set) — except under NODE_ENV=production, where leaving out
   * `platformOrigins` refuses the start unless this mode is set explicitly. The platform's mobile
   * apps may open the game in webviews that send none of these headers: see `allowMissingHeaders`
   * and `allowDirectNavigation`.
   */
  mode: z
    .enum(['off', 'report', 'enforce'], { error: "must be 'off', 'report' or 'enforce'" })
    .optional(),
  /**
   * Accept entries that carry neither Fetch Metadata (`Sec-Fetch-*`) nor a `Referer` — what
   * webviews and old browsers send. Such an entry cannot be told from a forged one. Defaults to `false`.
   */
  allowMissingHeaders: z.boolean({ error: 'must be a boolean' }).default(false),
  /**
   * Accept `Sec-Fetch-Site: none`: a navigation the user started outside any page (address bar,
   * bookmark, another app opening the link) — which is also what a link in an e-mail looks like.
   * Turn on only when the platform opens the game from a native app. Defaults to `false`.
   */
  allowDirectNavigation: z.boolean({ error: 'must be a boolean' }).default(false),
};

/** Options of the entry context check (`entry.context` of platformLogin()). */
export const entryContextSchema: OptionsSchema<typeof entryContextShape> =
  z.strictObject(entryContextShape);

/** The settings a judgement needs, computed once (entryContextSettings). */
export type EntryContextSettings = ReturnType<typeof entryContextSettings>['judge'];

/** Judges the headers of an entry; `undefined` when it looks like it came from the platform. */
export function judgeEntryContext(
  headers: IncomingHttpHeaders,
  settings: EntryContextSettings,
): EntryContextViolationReason | undefined {
  const site = single(headers['sec-fetch-site']);
  const dest = single(headers['sec-fetch-dest']);
  const referer = single(headers.referer);
  if (dest !== undefined && !settings.destinations.has(dest)) return 'unexpected-destination';
  if (site === 'none') return settings.allowDirectNavigation ? undefined : 'direct-navigation';
  if (referer !== undefined && referer !== '') {
    const origin = originOf(referer);
    return origin !== undefined && settings.platformOrigins.has(origin)
      ? undefined
      : 'foreign-referer';
  }
  // A browser that sends Fetch Metadata sends the referrer's origin on a cross-site navigation by
  // default (strict-origin-when-cross-origin); without it the entry hides where it came from.
  if (site !== undefined || dest !== undefined) return 'referer-missing';
  return settings.allowMissingHeaders ? undefined : 'headers-missing';
}

const FETCH_TOKEN = /^[a-z-]{1,32}$/;
const token = (value: string | undefined): string | undefined =>
  value !== undefined && FETCH_TOKEN.test(value) ? value : undefined;

function describe(
  headers: IncomingHttpHeaders,
  reason: EntryContextViolationReason,
  refused: boolean,
): EntryContextViolation {
  const referer = single(headers.referer);
  const origin = originOf(referer);
  return {
    reason,
    refused,
    secFetchSite: token(single(headers['sec-fetch-site'])),
    secFetchDest: token(single(headers['sec-fetch-dest'])),
    refererOrigin:
      referer === undefined || referer === ''
        ? undefined
        : origin === undefined || origin.length > 200
          ? 'invalid'
          : origin,
  };
}

/** Destinations of a page navigation; anything else (`image`, `script`, `empty`, …) is a sub-resource. */
const NAVIGATIONS: ReadonlySet<string> = new Set(['document', 'iframe', 'frame']);

const WARNING =
  "Entries are not checked against the platform's pages, so any site can log a " +
  "visitor into another player's account with an unused code (login CSRF): set `platformOrigins` to the " +
  "origins of the platform's pages that open the game (e.g. ['https://platform.example']). Until then " +
  '`entry.context` only reports (`entryContextViolation` events; their `refererOrigin` shows where entries come from).';

/**
 * The settings of the check from `entry.context`, `platformOrigins` and `embedded`, derived once at
 * creation (entry-options.ts): the mode defaults to `'enforce'` with `platformOrigins`, else `'report'`.
 */
export function entryContextSettings(
  options: z.output<typeof entryContextSchema> | undefined,
  platformOrigins: readonly string[] | undefined,
  embedded: boolean,
) {
  return {
    mode: options?.mode ?? (platformOrigins === undefined ? 'report' : 'enforce'),
    // Neither was given: the check only reports, and says so once at start (in production that
    // setup is refused before this: setup/creation-checks.ts).
    unconfigured: options?.mode === undefined && platformOrigins === undefined,
    judge: {
      platformOrigins: new Set(platformOrigins),
      destinations: embedded ? NAVIGATIONS : new Set(['document']),
      allowMissingHeaders: options?.allowMissingHeaders ?? false,
      allowDirectNavigation: options?.allowDirectNavigation ?? false,
    },
  };
}

/** The reason in words for the log: what the entry showed, and what was expected. */
function explain(violation: EntryContextViolation, configured: string): string {
  switch (violation.reason) {
    case 'foreign-referer':
      return `foreign-referer: it came from ${violation.refererOrigin ?? 'an unreadable Referer'}, platformOrigins is ${configured}`;
    case 'headers-missing':
      return 'headers-missing: no Referer and no Sec-Fetch-* headers, as from a typed or bookmarked link, a webview or a client such as curl';
    case 'referer-missing':
      return 'referer-missing: the browser sent Fetch Metadata but no Referer, so where the entry came from is hidden';
    case 'direct-navigation':
      return 'direct-navigation: Sec-Fetch-Site is none (the URL was opened directly); `entry.context.allowDirectNavigation` allows it';
    default:
      return violation.reason;
  }
}

/**
 * The check run on each GET to the callback, before anything else touches a code.
 * Throws RequestRefusedError `ERR_PLATFORM_ENTRY_CONTEXT` in `'enforce'` mode, and for a sub-resource load in every mode;
 * emits `entryContextViolation` for each suspicious entry (except in `'off'` mode).
 */
export function createEntryContextCheck(
  settings: ReturnType<typeof entryContextSettings>,
  events: EventEmitter<PlatformLoginEvents>,
  warn: (message: string) => void,
): (req: Request) => void {
  const { mode } = settings;
  if (settings.unconfigured) warnOnce(warn, WARNING);
  const refuseSubResource = (req: Request): void => {
    const dest = single(req.headers['sec-fetch-dest']);
    if (dest === undefined || NAVIGATIONS.has(dest)) return;
    events.emit('entryContextViolation', describe(req.headers, 'unexpected-destination', true));
    throw entryContextRefused('unexpected-destination');
  };
  if (mode === 'off') return refuseSubResource;
  const refuse = mode === 'enforce';
  const configured = [...settings.judge.platformOrigins].join(', ') || 'none';
  return (req) => {
    refuseSubResource(req);
    const reason = judgeEntryContext(req.headers, settings.judge);
    if (reason === undefined) return;
    const violation = describe(req.headers, reason, refuse);
    events.emit('entryContextViolation', violation);
    if (refuse) throw entryContextRefused(reason, explain(violation, configured));
  };
}
