// What the entry tests send: the platform's origin, the headers a browser sends when the platform's
// page opens the game, and the spellings of the callback path a router may still match.

export const PLATFORM = 'https://platform.example';

/** A top-level navigation from the platform's page: what a real entry carries. */
export const FROM_PLATFORM = {
  'Sec-Fetch-Site': 'cross-site',
  'Sec-Fetch-Mode': 'navigate',
  'Sec-Fetch-Dest': 'document',
  Referer: `${PLATFORM}/`,
};

/** The same navigation started by another site's page (a link, `location = …`). */
export const FROM_ATTACKER = { ...FROM_PLATFORM, Referer: 'https://attacker.example/' };

export const JSON_ACCEPT = { Accept: 'application/json' };

/** Spellings of the callback path a router may still match (case, slashes, dot segments, escapes). */
export const SPELLINGS = [
  '/platform/callback',
  '/platform/callback/',
  '/platform/callback//',
  '/platform/callback///',
  '/PLATFORM/CALLBACK',
  '/Platform/Callback/',
  '/platform/callback/.',
  '/platform/callback/./',
  '/platform/./callback',
  '/platform//callback',
  '//platform/callback',
  '/platform%2Fcallback',
  '/platform/callback%2F',
  '/platform/callback%2f%2f',
  '/platform/%63allback',
];
