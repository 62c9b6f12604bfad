// One attempt at the token endpoint over HTTP: POST, no redirect followed, one deadline for the
// headers and the whole body, the body capped while it streams. Failures leave as typed errors.
import { invalidTokenResponse, PlatformError, PlatformLoginError } from '../errors';
import { raceAbort, readCappedBody, type CappedBody } from './read-capped-body';
import type { TokenEndpointAnswer, TokenGrant } from './token-response';

/** What is sent: the URL (with the parameters when they go in the query) and the body, if any. */
export interface TokenRequest {
  grant: TokenGrant;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** The limits of one attempt and the fetch to make it with. */
export interface TokenRequestLimits {
  fetch: typeof fetch;
  timeoutMs: number;
  maxResponseBytes: number;
  /** The configured endpoint, without any query: the only URL an error message may name. */
  tokenEndpoint: string;
}

/** The answer of one attempt plus its Retry-After header, for the retry decision. */
export interface TokenAttemptResult {
  answer: TokenEndpointAnswer;
  retryAfter: string | null;
}

/** The abort reason of our own deadline, told apart from any other abort. */
const DEADLINE = Object.freeze({ reason: 'token request deadline' });

/** Releases a body that will not be read, so the connection is not held. */
function discard(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}

/**
 * Sends one token request and collects its answer within `timeoutMs`. Rejects with
 * PlatformError `ERR_PLATFORM_TIMEOUT`, `ERR_PLATFORM_NETWORK`, or `ERR_PLATFORM_INVALID_RESPONSE` for a body
 * beyond `maxResponseBytes`; whatever the status, an answer that arrived in time resolves.
 */
export async function sendTokenRequest(
  request: TokenRequest,
  limits: TokenRequestLimits,
): Promise<TokenAttemptResult> {
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(() => controller.abort(DEADLINE), limits.timeoutMs);
  try {
    const response = await raceAbort(
      limits.fetch(request.url, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
        // A 3xx from a token endpoint is a misconfiguration; following it would resend the
        // credentials to wherever it points.
        redirect: 'manual',
        signal,
      }),
      signal,
    );
    const answer = {
      status: response.status,
      contentType: response.headers.get('content-type'),
      body: new Uint8Array(0),
    };
    const retryAfter = response.headers.get('retry-after');
    if (response.status >= 300 && response.status < 400) {
      discard(response);
      return { answer, retryAfter };
    }
    // A declared length over the cap fails before reading; an undeclared one is counted as it comes.
    let read: CappedBody;
    const declared = response.headers.get('content-length');
    const declaredBytes = declared === null ? undefined : Number(declared);
    if (declaredBytes !== undefined && declaredBytes > limits.maxResponseBytes) {
      discard(response);
      read = { tooLarge: true };
    } else if (
      declaredBytes !== undefined &&
      Number.isInteger(declaredBytes) &&
      response.headers.get('content-encoding') === null
    ) {
      // An unencoded body of a declared length within the cap is all fetch reads (a longer one
      // fails as a network error): read in one go, without the chunk by chunk count that a body of
      // unknown length, or one fetch decompresses (its length is the compressed one), needs.
      const bytes = new Uint8Array(await raceAbort(response.arrayBuffer(), signal));
      read = { tooLarge: false, bytes };
    } else {
      read = await readCappedBody(response.body, limits.maxResponseBytes, signal);
    }
    if (read.tooLarge) {
      throw invalidTokenResponse(
        `The token endpoint's answer to the ${request.grant} request is larger than ` +
          `maxResponseBytes (${limits.maxResponseBytes} bytes); reading was stopped there.`,
        { httpStatus: response.status },
      );
    }
    return { answer: { ...answer, body: read.bytes }, retryAfter };
  } catch (error) {
    if (error instanceof PlatformLoginError) throw error;
    if (signal.aborted && signal.reason === DEADLINE) {
      throw new PlatformError(
        `The token endpoint ${limits.tokenEndpoint} did not answer the ${request.grant} request ` +
          `within ${limits.timeoutMs} ms (timeoutMs).`,
        { code: 'ERR_PLATFORM_TIMEOUT' },
      );
    }
    throw new PlatformError(
      `The token endpoint ${limits.tokenEndpoint} could not be reached for the ${request.grant} ` +
        'request, or dropped the connection. Check authUrl and the network.',
      { code: 'ERR_PLATFORM_NETWORK', cause: error },
    );
  } finally {
    clearTimeout(timer);
  }
}
