// Reads a response body under two limits at once: a byte cap checked while streaming (a huge body is
// never buffered) and the caller's abort signal (a body trickling forever still ends on time).

/** The outcome of reading a body: its bytes, or the news that it exceeded the cap. */
export type CappedBody = { tooLarge: false; bytes: Uint8Array } | { tooLarge: true };

/**
 * Settles like `promise`, or rejects with `signal.reason` as soon as `signal` aborts, whichever
 * comes first, so that a fetch or a read that ignores the signal cannot outlive the deadline.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Stops the stream quietly: it is only read to be thrown away or was already given up on. */
function discard(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  reader.cancel().catch(() => undefined);
}

/**
 * Reads `body` to the end unless it grows beyond `maxBytes` (then stops reading and reports
 * `tooLarge`) or `signal` aborts first (then rejects with the signal's reason).
 */
export async function readCappedBody(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  signal: AbortSignal,
): Promise<CappedBody> {
  if (body === null) return { tooLarge: false, bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await raceAbort(reader.read(), signal);
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        discard(reader);
        return { tooLarge: true };
      }
      chunks.push(value);
    }
  } catch (error) {
    discard(reader);
    throw error;
  }
  return { tooLarge: false, bytes: Buffer.concat(chunks, total) };
}
