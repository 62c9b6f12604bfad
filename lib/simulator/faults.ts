// Fault knobs of POST /token: what a test can switch on, checked once when injected, and the queue
// that hands the next matching fault to each call. fault-responses.ts puts them on the wire.
import { z } from 'zod';
import { parseOptions, type OptionsSchema } from '../util/parse-options';

function isJsonValue(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return true;
  } catch {
    return false;
  }
}

const count = (what: string) => z.number({ error: `must be a whole number, ${what}` }).int();

const faultSchema = z.discriminatedUnion(
  'kind',
  [
    /** Answer normally, after `ms` milliseconds. */
    z.strictObject({ kind: z.literal('latency'), ms: count('0 to 600000').min(0).max(600_000) }),
    /** This HTTP status with a short text/plain body (and `Retry-After` when given); the request is not processed. */
    z.strictObject({
      kind: z.literal('status'),
      status: count('an HTTP status from 200 to 599').min(200).max(599),
      retryAfterSeconds: count('0 or more').min(0).optional(),
    }),
    /**
     * A platform throttling us, in the simulator's answer style: 429 with an OAuth
     * `temporarily_unavailable` body, or HTTP 200 with `errcode: 45011` / `data.error_code: 10020`;
     * `Retry-After: retryAfterSeconds` when it is above 0 (always on the 429).
     */
    z.strictObject({
      kind: z.literal('throttle'),
      retryAfterSeconds: count('0 or more').min(0),
    }),
    /**
     * The platform is busy (its "system busy, try again"), in the simulator's answer style: 503
     * `temporarily_unavailable`, `errcode: -1`, or `data.error_code: 2100004`; not processed.
     */
    z.strictObject({ kind: z.literal('busy') }),
    /** 200 with an HTML page, as a captive portal or a login wall would send. */
    z.strictObject({ kind: z.literal('html') }),
    /** 200 `application/json` whose body is not JSON (cut off mid-object). */
    z.strictObject({ kind: z.literal('malformed-json') }),
    /** 200 `application/json` with an empty body. */
    z.strictObject({ kind: z.literal('empty') }),
    /** 200 with an OAuth error body `{ error, error_description }`; the request is not processed. */
    z.strictObject({
      kind: z.literal('error-body-200'),
      error: z.string({ error: 'must be a non-empty string' }).min(1),
      errorDescription: z.string({ error: 'must be a string' }).optional(),
    }),
    /**
     * 200 with a platform's own error object `{ err_no, err_msg }` (not OAuth's shape), as platforms
     * that answer every call with 200 send for a bad code; the request is not processed.
     */
    z.strictObject({
      kind: z.literal('platform-error'),
      errNo: count('any').min(-2_147_483_648).max(2_147_483_647),
      errMsg: z.string({ error: 'must be a string' }).optional(),
    }),
    /** The normal answer padded with an unknown `padding` field to `bytes` bytes, sent chunked (no Content-Length). */
    z.strictObject({
      kind: z.literal('oversized'),
      bytes: count('1 to 104857600')
        .min(1)
        .max(100 * 1024 * 1024),
    }),
    /** Never answers: no headers, the socket stays open until close(). */
    z.strictObject({ kind: z.literal('hang') }),
    /** Headers at once, then the normal body trickled at `bytesPerSecond`. */
    z.strictObject({
      kind: z.literal('slow-body'),
      bytesPerSecond: count('1 or more').min(1),
    }),
    /** The TCP connection is reset without an answer. */
    z.strictObject({ kind: z.literal('reset') }),
    /** 302 to `location`. */
    z.strictObject({
      kind: z.literal('redirect'),
      location: z.string({ error: 'must be a non-empty string' }).min(1),
    }),
    /** The normal answer with `field` set to `value` (any JSON value), or removed when `remove` is true. */
    z.strictObject({
      kind: z.literal('field'),
      field: z.string({ error: 'must be a non-empty string' }).min(1),
      value: z
        .unknown()
        .refine(isJsonValue, { error: 'must be a value JSON.stringify accepts' })
        .optional(),
      remove: z.boolean({ error: 'must be true or false' }).optional(),
    }),
  ],
  {
    error:
      'must be one of latency, status, throttle, html, malformed-json, empty, error-body-200, platform-error, oversized, hang, slow-body, reset, redirect, field, busy',
  },
);

const faultOptionsShape = {
  /** Only calls with this grant_type. Defaults to every call of POST /token. */
  grant: z
    .enum(['authorization_code', 'refresh_token'], {
      error: "must be 'authorization_code' or 'refresh_token'",
    })
    .optional(),
  /** How many calls it applies to. Defaults to every call until clearFaults(). */
  times: count('1 or more').min(1).optional(),
};

const faultOptionsSchema: OptionsSchema<typeof faultOptionsShape> =
  z.strictObject(faultOptionsShape);

/** Which calls a fault applies to and how many times. */
export type FaultOptions = z.input<typeof faultOptionsSchema>;

/** A way for the token endpoint to misbehave: one of the kinds above, each with its own fields. */
export type SimulatorFault = z.input<typeof faultSchema>;

/** The grant a call is counted under: its grant_type, or `invalid` for anything else. */
export type CallKind = 'authorization_code' | 'refresh_token' | 'invalid';

/** Injected faults, in order of injection; each call takes the first one that matches it. */
export class FaultQueue {
  private queue: { fault: SimulatorFault; grant: FaultOptions['grant']; remaining: number }[] = [];

  inject(fault: SimulatorFault, options?: FaultOptions): void {
    const parsed = parseOptions(faultSchema, fault, 'injectFault') as SimulatorFault;
    const { grant, times } = parseOptions(faultOptionsSchema, options, 'injectFault options');
    this.queue.push({ fault: parsed, grant, remaining: times ?? Infinity });
  }

  clear(): void {
    this.queue = [];
  }

  /** The fault for this call, if any; a fault with a `times` budget is used up by it. */
  take(kind: CallKind): SimulatorFault | undefined {
    const index = this.queue.findIndex(({ grant }) => grant === undefined || grant === kind);
    const entry = this.queue[index];
    if (entry === undefined) return undefined;
    entry.remaining -= 1;
    if (entry.remaining <= 0) this.queue.splice(index, 1);
    return entry.fault;
  }
}
