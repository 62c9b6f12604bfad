// The one rule for a redirect_uri, shared by the package's options and the simulator's client
// registrations, so an address one of them accepts is never refused by the other.

/** Control characters would corrupt a request; they never belong in a client id or a URL. */
export const CONTROL_CHARACTERS = /\p{Cc}/u;

/**
 * True for an absolute http(s) URL without a fragment (RFC 6749 3.1.2) and without control
 * characters: the address is sent byte for byte, so it is checked as given, not as normalised.
 */
export function isRedirectUri(value: string): boolean {
  if (!URL.canParse(value) || value.includes('#') || CONTROL_CHARACTERS.test(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}
