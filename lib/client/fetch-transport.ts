// A token request through a fetch the app passed in (`tokenClient.fetch`): no redirect followed, one
// deadline for the headers and the whole body, the body capped while it streams (a huge body is
// never buffered, one trickling forever still ends on time).
import {
  DEADLINE,
  type TokenRequest,
  type TransportAnswer,
  type TransportLimits,
} from './token-transport';

/** Releases a body that will not be read (or no further), so the connection is not held. */
function discard(body: { cancel(): Promise<void> } | null): void {
  body?.cancel().catch(() => undefined);
}

/**
 * Settles like `promise`, or rejects with `signal.reason` as soon as `signal` aborts, whichever
 * comes first, so that a fetch or a read that ignores the signal cannot outlive the deadline.
 */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() =>
    signal.removeEventListener('abort', onAbort),
  );
}

/**
 * Reads `body` to the end, or `undefined` once it grows beyond `maxBytes` (reading stops there);
 * rejects with the signal's reason when `signal` aborts first.
 */
async function readCappedBody(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Uint8Array | undefined> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await raceAbort(reader.read(), signal);
      if (done) return Buffer.concat(chunks, total);
      total += value.byteLength;
      if (total > maxBytes) {
        discard(reader);
        return undefined;
      }
      chunks.push(value);
    }
  } catch (error) {
    discard(reader);
    throw error;
  }
}

/** Sends `request` with `fetchFn`; rejects with DEADLINE after `timeoutMs`, or with what fetch threw. */
export async function sendOverFetch(
  request: TokenRequest,
  fetchFn: typeof fetch,
  limits: TransportLimits,
): Promise<TransportAnswer> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
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
      discard(response.body);
      return { ...answer, body: new Uint8Array(0) };
    }
    // A declared length over the cap fails before reading; the body is counted as it comes.
    const declared = response.headers.get('content-length');
    if (declared !== null && Number(declared) > limits.maxResponseBytes) {
      discard(response.body);
      return { ...answer, body: undefined };
    }
    return {
      ...answer,
      body: await readCappedBody(response.body, limits.maxResponseBytes, signal),
    };
  } catch (error) {
    // Only the deadline aborts the signal.
    throw signal.aborted ? DEADLINE : error;
  }
}
