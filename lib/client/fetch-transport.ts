// A token request through a fetch the app passed in (`tokenClient.fetch`): no redirect followed, one
// deadline for the headers and the whole body, the body capped while it streams.
import { raceAbort, readCappedBody } from './read-capped-body';
import {
  DEADLINE,
  type TokenRequest,
  type TransportAnswer,
  type TransportLimits,
} from './token-transport';

/** Releases a body that will not be read, so the connection is not held. */
function discard(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}

/** Sends `request` with `fetchFn`; rejects with DEADLINE after `timeoutMs`, or with what fetch threw. */
export async function sendOverFetch(
  request: TokenRequest,
  fetchFn: typeof fetch,
  limits: TransportLimits,
): Promise<TransportAnswer> {
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(() => controller.abort(DEADLINE), limits.timeoutMs);
  try {
    const response = await raceAbort(
      fetchFn(request.url, {
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
      retryAfter: response.headers.get('retry-after'),
    };
    if (response.status >= 300 && response.status < 400) {
      discard(response);
      return { ...answer, body: new Uint8Array(0) };
    }
    // A declared length over the cap fails before reading; an undeclared one is counted as it comes.
    const declared = response.headers.get('content-length');
    const declaredBytes = declared === null ? undefined : Number(declared);
    if (declaredBytes !== undefined && declaredBytes > limits.maxResponseBytes) {
      discard(response);
      return { ...answer, body: undefined };
    }
    if (
      declaredBytes !== undefined &&
      Number.isInteger(declaredBytes) &&
      response.headers.get('content-encoding') === null
    ) {
      // An unencoded body of a declared length within the cap is all fetch reads (a longer one
      // fails as a network error): read in one go, without the chunk by chunk count that a body of
      // unknown length, or one fetch decompresses (its length is the compressed one), needs.
      const bytes = new Uint8Array(await raceAbort(response.arrayBuffer(), signal));
      return { ...answer, body: bytes };
    }
    const read = await readCappedBody(response.body, limits.maxResponseBytes, signal);
    return { ...answer, body: read.tooLarge ? undefined : read.bytes };
  } catch (error) {
    throw signal.aborted && signal.reason === DEADLINE ? DEADLINE : error;
  } finally {
    clearTimeout(timer);
  }
}
