// A token request over node:http/https, the default transport: a small POST through fetch costs
// about three times the CPU (bench/micro/token-transport.ts), and the token request is the largest
// part of an entry's. Node's global agents keep connections alive and close an idle one before the
// server's announced Keep-Alive timeout, as fetch does. No redirect is followed (node:http never
// does): a 3xx from a token endpoint is a misconfiguration, and following it would resend the
// credentials to wherever it points.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';
import {
  DEADLINE,
  type TokenRequest,
  type TransportAnswer,
  type TransportLimits,
} from './token-transport';
import { deadlineTimer } from '../util/deadline-timer';

type Decoder = (
  buffer: Buffer,
  options: ZlibOptions,
  callback: (error: Error | null, result: Buffer) => void,
) => void;

/**
 * The codings a server may use although the request asks for none (`accept-encoding: identity`),
 * as fetch would decode them; any other is left as it came and fails as JSON.
 */
const DECODERS: ReadonlyMap<string, Decoder> = new Map([
  ['gzip', gunzip],
  ['x-gzip', gunzip],
  ['deflate', inflate],
  ['br', brotliDecompress],
]);

/**
 * Sends `request`; resolves with the answer once its body is read (and decoded), rejects with
 * DEADLINE when `timeoutMs` passes first (headers and body alike), or with the socket's error.
 */
export function sendOverHttp(
  request: TokenRequest,
  limits: TransportLimits,
): Promise<TransportAnswer> {
  return new Promise((resolve, reject) => {
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    const send = request.url.startsWith('https:') ? httpsRequest : httpRequest;
    const outgoing = send(request.url, {
      method: 'POST',
      headers: {
        ...request.headers,
        'accept-encoding': 'identity',
        ...(body === undefined ? {} : { 'content-length': String(body.byteLength) }),
      },
    });
    let settled = false;
    /** Settles once; a socket given up on (deadline, cap, 3xx) is destroyed, not returned to the pool. */
    const settle = (outcome: () => void, destroy = false): void => {
      if (settled) return;
      settled = true;
      cancelDeadline();
      outcome();
      if (destroy) outgoing.destroy();
    };
    const cancelDeadline = deadlineTimer(
      () => settle(() => reject(DEADLINE), true),
      limits.timeoutMs,
    );
    outgoing.on('error', (error) => settle(() => reject(error)));
    outgoing.on('response', (response) => {
      const answer = {
        status: response.statusCode ?? 0,
        contentType: response.headers['content-type'] ?? null,
        retryAfter: response.headers['retry-after'] ?? null,
      };
      const answered = (body: Uint8Array | undefined, destroy = false): void =>
        settle(() => resolve({ ...answer, body }), destroy);
      const tooLarge = (): void => answered(undefined, true);
      if (answer.status >= 300 && answer.status < 400) return answered(new Uint8Array(0), true);
      const declared = response.headers['content-length'];
      if (declared !== undefined && Number(declared) > limits.maxResponseBytes) return tooLarge();
      const chunks: Buffer[] = [];
      let total = 0;
      response.on('data', (chunk: Buffer) => {
        total += chunk.byteLength;
        if (total > limits.maxResponseBytes) tooLarge();
        else chunks.push(chunk);
      });
      response.on('error', (error) => settle(() => reject(error)));
      response.on('close', () => {
        if (!response.complete)
          settle(() => reject(new Error('The connection closed before the answer ended.')));
      });
      response.on('end', () => {
        const bytes = Buffer.concat(chunks, total);
        const coding = response.headers['content-encoding'];
        const decode = coding === undefined ? undefined : DECODERS.get(coding.toLowerCase());
        if (decode === undefined) return answered(bytes);
        // The cap holds for what the body decodes to, not only for what came over the wire.
        decode(bytes, { maxOutputLength: limits.maxResponseBytes }, (error, decoded) => {
          if (error === null) answered(decoded);
          else if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') tooLarge();
          else settle(() => reject(error));
        });
      });
    });
    outgoing.end(body);
  });
}
