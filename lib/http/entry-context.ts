// Entry context: did this entry come from the platform's pages? Judged from Sec-Fetch-Site,
// Sec-Fetch-Dest and Referer before the code is claimed or sent; reported or refused per the mode.
import type { IncomingHttpHeaders } from 'node:http';
import type { EventEmitter } from 'node:events';
import type { Request } from 'express';
import { z } from 'zod';
import { EntryContextRefusedError } from '../errors';
import type {
  EntryContextViolation,
  EntryContextViolationReason,
  PlatformLoginEvents,
} from '../observability/events';
import { originOf } from './origins';
import type { SameOptions } from '../util/parse-options';

/** Options of the entry context check (`entryContext` of platformLogin()). */
export interface EntryContextOptions {
  /**
   * `'off'`: no check. `'report'`: an `entryContextViolation` event per suspicious entry, which is
   * still served. `'enforce'`: the event, and the entry is refused with 403 `entry_context_refused`
   * before its code is claimed or sent. Defaults to `'off'`: the platform's mobile apps open the
   * game in webviews and in-app browsers that may send none of these headers, or a Referer the
   * platform never announced, so a check must be watched in `'report'` before it is enforced.
   */
  mode?: 'off' | 'report' | 'enforce';
  /**
   * Accept entries that carry neither Fetch Metadata (`Sec-Fetch-*`) nor a `Referer` — what
   * webviews and old browsers send. Such an entry cannot be told from a forged one. Defaults to `false`.
   */
  allowMissingHeaders?: boolean;
  /**
   * Accept `Sec-Fetch-Site: none`: a navigation the user started outside any page (address bar,
   * bookmark, another app opening the link) — which is also what a link in an e-mail looks like.
   * Turn on only when the platform opens the game from a native app. Defaults to `false`.
   */
  allowDirectNavigation?: boolean;
}

/** The schema of {@link EntryContextOptions}; its fields are documented there. */
export const entryContextSchema = z.strictObject({
  mode: z
    .enum(['off', 'report', 'enforce'], { error: "must be 'off', 'report' or 'enforce'" })
    .default('off'),
  allowMissingHeaders: z.boolean({ error: 'must be a boolean' }).default(false),
  allowDirectNavigation: z.boolean({ error: 'must be a boolean' }).default(false),
});

const _documented: SameOptions<EntryContextOptions, z.input<typeof entryContextSchema>> = true;

/** The settings a judgement needs, computed once. */
export interface EntryContextSettings {
  platformOrigins: ReadonlySet<string>;
  /** `Sec-Fetch-Dest` values that count as an entry: `document`, plus frames in embedded mode. */
  destinations: ReadonlySet<string>;
  allowMissingHeaders: boolean;
  allowDirectNavigation: boolean;
}

const single = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

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

/**
 * The check run on each GET entry that carries a code, or `undefined` in `'off'` mode. Throws
 * EntryContextRefusedError in `'enforce'` mode; emits `entryContextViolation` in both other modes.
 */
export function createEntryContextCheck(
  options: z.output<typeof entryContextSchema> | undefined,
  platformOrigins: readonly string[] | undefined,
  embedded: boolean,
  events: EventEmitter<PlatformLoginEvents>,
): ((req: Request) => void) | undefined {
  if (options === undefined || options.mode === 'off') return undefined;
  if (platformOrigins === undefined) {
    throw new TypeError(
      `platformLogin(): \`platformOrigins\` is required when \`entryContext.mode\` is '${options.mode}': list the origins of the platform's pages that open the game, e.g. ['https://platform.example'].`,
    );
  }
  const settings: EntryContextSettings = {
    platformOrigins: new Set(platformOrigins),
    destinations: new Set(embedded ? ['document', 'iframe', 'frame'] : ['document']),
    allowMissingHeaders: options.allowMissingHeaders,
    allowDirectNavigation: options.allowDirectNavigation,
  };
  const refuse = options.mode === 'enforce';
  return (req) => {
    const reason = judgeEntryContext(req.headers, settings);
    if (reason === undefined) return;
    events.emit('entryContextViolation', describe(req.headers, reason, refuse));
    if (refuse) throw new EntryContextRefusedError(reason);
  };
}
