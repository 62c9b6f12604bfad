// Origin lists in options (the platform's pages, the game's own other front ends): each entry an
// exact `scheme://host[:port]`, normalised once at creation.
import { z } from 'zod';

/** True for `http(s)://host[:port]` with nothing after it (a trailing "/" is tolerated). */
function isOrigin(value: string): boolean {
  const bare = value.replace(/\/$/, '');
  // Scheme and authority only: no path, query, fragment, credentials or wildcard.
  return /^https?:\/\/[^/?#@*\\]+$/i.test(bare) && URL.canParse(bare);
}

/** One origin, normalised to `URL.origin` (lower-case host, default port dropped). */
const originSchema = z
  .string()
  .refine(isOrigin, {
    message:
      'must hold origins such as "https://platform.example" (scheme, host and port only; no path, no wildcard)',
  })
  .transform((value) => new URL(value).origin);

/** A non-empty list of origins, de-duplicated. */
export const originListSchema = z
  .array(originSchema)
  .min(1, { message: 'must hold at least one origin when given' })
  .transform((origins) => [...new Set(origins)]);

/** A header's value, the first one when it came more than once. */
export const single = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/** The origin of a URL header value (Referer), or `undefined` when it is not an absolute URL. */
export function originOf(value: string | undefined): string | undefined {
  if (value === undefined || !URL.canParse(value)) return undefined;
  return new URL(value).origin;
}
