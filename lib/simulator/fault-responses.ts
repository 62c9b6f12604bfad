// How each fault of faults.ts goes on the wire. Faults that stand for a broken platform (status,
// html, garbage, reset, …) answer without processing the request: no code is used up. Faults that
// reshape an answer (latency, oversized, slow-body, field) process it first, as a slow or sloppy
// platform would.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { pipeline, Readable } from 'node:stream';
import { setInterval as every, setTimeout as delay } from 'node:timers/promises';
import { ignore } from '../util/ignore';
import type { SimulatorFault } from './faults';
import { JSON_TYPE, NO_STORE, sendBody, sendJson } from './write-response';
import { failureAnswer, type SimulatorAnswerStyle, type TokenOutcome } from './answer-style';

/** What a fault needs to answer a call. */
export interface FaultContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Aborts when the simulator closes: delayed and trickled answers stop there. */
  closed: AbortSignal;
  /** Processes the request (uses up a code, renews a token) and returns the normal answer. */
  produce: () => TokenOutcome;
  /** How the simulator answers: a throttle or a busy platform says so in this style. */
  style: SimulatorAnswerStyle;
}

const HTML_PAGE =
  '<!doctype html><html><head><title>Sign in</title></head>' +
  '<body><h1>Please sign in to continue</h1></body></html>';

// Cut off in the middle of a value: a truncated answer, with no real token in it.
const MALFORMED_JSON = '{"access_token":"truncated","expires_in":72';

/** One chunk of JSON-safe padding, shared by every oversized answer. */
const PADDING = Buffer.alloc(16 * 1024, 'x');
const TRICKLE_TICK_MS = 100;

/** Answers the call the way `fault` says. */
export function answerWithFault(fault: SimulatorFault, context: FaultContext): void {
  const { req, res } = context;
  switch (fault.kind) {
    case 'latency':
      // The platform finishes its work even when the client gave up waiting.
      void delay(fault.ms, undefined, { signal: context.closed }).then(() => {
        const outcome = context.produce();
        sendJson(res, outcome.status, outcome.body);
      }, ignore);
      return;
    case 'status': {
      const headers: Record<string, string> =
        fault.retryAfterSeconds === undefined
          ? {}
          : { 'Retry-After': String(fault.retryAfterSeconds) };
      const text = `${fault.status} ${STATUS_CODES[fault.status] ?? 'Error'}`;
      sendBody(res, fault.status, 'text/plain;charset=UTF-8', text, headers);
      return;
    }
    case 'throttle': {
      // What a rate-limited OAuth server sends: 429 and Retry-After; the numeric styles say it in a
      // 200, with Retry-After only when there is a wait.
      const limited = failureAnswer(context.style, 'rate_limited', 'api freq out of limit');
      const wait = limited.status === 429 || fault.retryAfterSeconds > 0;
      sendJson(
        res,
        limited.status,
        limited.body,
        wait ? { 'Retry-After': String(fault.retryAfterSeconds) } : undefined,
      );
      return;
    }
    case 'busy': {
      const busy = failureAnswer(context.style, 'busy', 'system busy, try again later');
      sendJson(res, busy.status, busy.body);
      return;
    }
    case 'html':
      sendBody(res, 200, 'text/html;charset=UTF-8', HTML_PAGE);
      return;
    case 'malformed-json':
      sendBody(res, 200, JSON_TYPE, MALFORMED_JSON);
      return;
    case 'empty':
      sendBody(res, 200, JSON_TYPE, '');
      return;
    case 'platform-error':
      sendJson(res, 200, { err_no: fault.errNo, err_msg: fault.errMsg ?? 'invalid code' });
      return;
    case 'error-body-200':
      // An absent description stays out: JSON leaves an undefined field out.
      sendJson(res, 200, { error: fault.error, error_description: fault.errorDescription });
      return;
    case 'oversized':
      sendOversized(res, context.produce(), fault.bytes);
      return;
    case 'hang':
      // No answer at all; close() destroys the socket.
      return;
    case 'slow-body':
      sendSlowly(context, context.produce(), fault.bytesPerSecond).catch(ignore);
      return;
    case 'reset':
      req.socket.resetAndDestroy();
      return;
    case 'redirect':
      sendBody(res, 302, 'text/plain;charset=UTF-8', '', { Location: fault.location });
      return;
    case 'field': {
      const outcome = context.produce();
      const body = { ...outcome.body };
      if (fault.remove === true) delete body[fault.field];
      // defineProperty, not assignment: a `__proto__` field must become a real JSON key.
      else Object.defineProperty(body, fault.field, { value: fault.value, enumerable: true });
      sendJson(res, outcome.status, body);
      return;
    }
  }
}

/** The answer padded to `bytes` with an unknown field, streamed without Content-Length. */
function sendOversized(res: ServerResponse, outcome: TokenOutcome, bytes: number): void {
  res.writeHead(outcome.status, { ...NO_STORE, 'Content-Type': JSON_TYPE });
  // Streamed with backpressure, so a 10 MB answer costs the simulator no 10 MB string (which under
  // load delayed it past the client's timeout) and a client that stops reading stops the stream.
  const json = JSON.stringify({ ...outcome.body, padding: '' });
  pipeline(Readable.from(padded(json, bytes)), res, ignore);
}

/** `json`, whose last field is an empty "padding" string, with that string filled up to `bytes`. */
function* padded(json: string, bytes: number): Generator<Buffer> {
  yield Buffer.from(json.slice(0, -2)); // up to and including the padding's opening quote
  for (let left = bytes - Buffer.byteLength(json); left > 0; left -= PADDING.length) {
    yield PADDING.subarray(0, Math.min(PADDING.length, left));
  }
  yield Buffer.from(json.slice(-2)); // '"}'
}

/** Headers at once (with the true Content-Length), then the body at `bytesPerSecond`. */
async function sendSlowly(
  context: FaultContext,
  outcome: TokenOutcome,
  bytesPerSecond: number,
): Promise<void> {
  const { res } = context;
  const body = Buffer.from(JSON.stringify(outcome.body));
  res.writeHead(outcome.status, {
    ...NO_STORE,
    'Content-Type': JSON_TYPE,
    'Content-Length': String(body.length),
  });
  res.flushHeaders();
  let offset = 0;
  let allowance = 0;
  for await (const _tick of every(TRICKLE_TICK_MS, undefined, { signal: context.closed })) {
    if (res.destroyed) return;
    allowance += (bytesPerSecond * TRICKLE_TICK_MS) / 1000;
    const size = Math.floor(allowance);
    if (size === 0) continue;
    allowance -= size;
    res.write(body.subarray(offset, offset + size));
    offset += size;
    if (offset >= body.length) break;
  }
  res.end();
}
