// Reads the `code` (or `error`) the platform appended to the redirect_uri, strictly: exactly one
// non-empty value of printable ASCII within a bounded length, or a clear 400 before any platform call.
import { entryDenied, invalidRequest } from '../errors';

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * The query of a callback URL. URLSearchParams is used rather than req.query: Express 4's qs parser
 * turns `code[a]=x` into an object. Parsed once per request, so the guards and the code reader
 * judge the very same parameters.
 */
export function entryQuery(originalUrl: string): URLSearchParams {
  const queryStart = originalUrl.indexOf('?');
  return new URLSearchParams(queryStart === -1 ? '' : originalUrl.slice(queryStart + 1));
}

/** The single valid code of a callback query; throws RequestRefusedError `ERR_PLATFORM_INVALID_REQUEST` or `ERR_PLATFORM_ENTRY_DENIED`. */
export function readEntryCode(params: URLSearchParams, maxCodeLength: number): string {
  const errors = params.getAll('error');
  if (errors.length > 0) throw entryDenied(errors[0]);
  const codes = params.getAll('code');
  if (codes.length !== 1) {
    throw invalidRequest(
      codes.length === 0
        ? 'The entry has no `code` parameter.'
        : 'The entry has more than one `code` parameter.',
    );
  }
  const code = codes[0]!;
  if (code.length === 0 || code.length > maxCodeLength || !PRINTABLE_ASCII.test(code)) {
    throw invalidRequest(
      `The entry \`code\` must be 1 to ${maxCodeLength} printable ASCII characters.`,
    );
  }
  return code;
}
