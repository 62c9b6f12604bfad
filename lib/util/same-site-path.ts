// Where the package may send a browser after an entry or a logout: a path on this site only.
import { z } from 'zod';

const SAME_SITE_PATH = /^\/(?![/\\])[\x21-\x7e]*$/;

/**
 * True for `/…` of printable ASCII, but never `//host` or `/\host`, which browsers read as another
 * site (an open redirect).
 */
export function isSameSitePath(value: string): boolean {
  return SAME_SITE_PATH.test(value);
}

/** An option that names such a path (`successRedirect`, logout's `redirectTo`). */
export const sameSitePath = z
  .string({
    error:
      'must be a path on this site starting with a single "/" (not an absolute or protocol-relative URL)',
  })
  .refine(isSameSitePath);
