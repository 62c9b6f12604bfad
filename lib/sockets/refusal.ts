// What a refused socket is answered, as the package answers API clients: the error's status and a
// JSON `{ error }` body, never a message that could carry internals.
import { answerFor } from '../http/respond-error';

/** The status, headers and body that answer `error` on a refused upgrade or handshake. */
export function refusal(error: unknown) {
  const { status, error: code, retryAfterSeconds } = answerFor(error);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
  };
  if (retryAfterSeconds !== undefined) headers['Retry-After'] = String(retryAfterSeconds);
  return { status, headers, body: JSON.stringify({ error: code }) };
}
