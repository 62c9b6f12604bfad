// Where the package may send a browser after an entry or a logout: a path on this site only.

const SAME_SITE_PATH = /^\/(?![/\\])[\x21-\x7e]*$/;

/**
 * True for `/…` of printable ASCII, but never `//host` or `/\host`, which browsers read as another
 * site (an open redirect).
 */
export function isSameSitePath(value: string): boolean {
  return SAME_SITE_PATH.test(value);
}
