// Answers an error as the README's "Errors" section documents it: the error's status, an `error`
// code in JSON for API clients or a short HTML page for browsers, and nothing else — no stack, no
// message that could carry internals.
import type { Request, Response } from 'express';
import { escapeHtml } from '../util/escape-html';
import { httpAnswer, isPlatformLoginError } from '../errors';

/** What a player is told, per error code; the JSON `error` code is for programs. */
const PLAYER_TEXT: Record<string, string> = {
  login_required: 'You are not logged in. Enter the game from the platform.',
  reauth_required: 'Your login has ended. Enter the game again from the platform.',
  code_already_used: 'This entry link was already used. Enter the game again from the platform.',
  code_rejected: 'The platform did not accept this entry. Enter the game again from the platform.',
  invalid_request: 'This entry link is not valid. Enter the game again from the platform.',
  platform_unavailable: 'The platform is not answering right now. Please try again in a moment.',
  platform_error: 'The platform answered with an error. Please enter the game again in a moment.',
  platform_timeout:
    'The platform took too long to answer. Please enter the game again in a moment.',
  store_unavailable: 'The game is having trouble right now. Please try again in a moment.',
  method_not_allowed: 'This address only opens from the platform.',
  entry_context_refused:
    'This entry did not come from the platform. Enter the game from the platform.',
  too_many_entries:
    'Too many entries failed from your network. Please wait a few minutes, then enter again from the platform.',
  platform_busy: 'The game is busy right now. Please enter again from the platform in a moment.',
  insufficient_scope:
    'Your login does not allow this. Grant the game the permission it asks for on the platform, then enter again.',
  entry_refused: 'The game did not accept this entry.',
  cross_origin_refused: 'This request came from another site and was refused.',
  // The platform's own `?error=` at an entry (RFC 6749 4.1.2.1): the player came back without a code.
  access_denied:
    'You did not allow the game to use your platform account. Enter the game again from the platform to allow it.',
  server_error:
    'The platform could not complete this entry. Please enter the game again in a moment.',
  temporarily_unavailable:
    'The platform is busy right now. Please enter the game again from the platform in a moment.',
  cookies_blocked:
    "Your browser did not keep the game's login cookie, so the game cannot know you inside the platform's page. " +
    'Allow cookies for this game (third-party cookies) or open the game in its own tab, then enter again from the platform.',
};
const FALLBACK_TEXT = 'Something went wrong. Please try again in a moment.';

/** A link back to the game's page where a player can enter again. */
const backLink = (homePath: string): string =>
  `<p><a href="${escapeHtml(homePath)}">Back to the game</a></p>`;

function page(status: number, text: string, homePath: string | undefined): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>' +
    status +
    '</title><meta name="viewport" content="width=device-width"></head>' +
    '<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem">' +
    `<p>${escapeHtml(text)}</p>${homePath === undefined ? '' : backLink(homePath)}</body></html>`
  );
}

/**
 * How the package answers `err` over HTTP (and on a refused socket upgrade): from the error table
 * for a package error, with its `Retry-After` seconds and its `Allow` method; else a plain 500.
 */
export function answerFor(err: unknown) {
  const known = isPlatformLoginError(err);
  return {
    ...(known ? httpAnswer(err) : { status: 500, error: 'internal_error' }),
    retryAfterSeconds: known && 'retryAfterSeconds' in err ? err.retryAfterSeconds : undefined,
    allow: known && err.code === 'ERR_PLATFORM_METHOD_NOT_ALLOWED' ? err.allow : undefined,
  };
}

/**
 * Writes the answer for `err` (a package error, or anything else as a plain 500). `homePath`: where
 * a player whose login is missing or ended can enter again (the HTML page links to it on a 401).
 */
export function respondWithError(
  err: unknown,
  req: Request,
  res: Response,
  homePath?: string,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, error, retryAfterSeconds, allow } = answerFor(err);
  res.status(status);
  res.setHeader('Cache-Control', 'no-store');
  if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(retryAfterSeconds));
  if (allow !== undefined) res.setHeader('Allow', allow);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  if (req.accepts(['json', 'html']) === 'html') {
    const link = status === 401 ? homePath : undefined;
    res.type('html').send(page(status, PLAYER_TEXT[error] ?? FALLBACK_TEXT, link));
  } else {
    res.json({ error });
  }
}
