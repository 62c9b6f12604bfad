// What the fuzz tests send and how: an app listening on loopback reached by a raw keep-alive HTTP
// client (a request line is sent as generated, no URL normalisation), and fast-check arbitraries
// for query strings, methods and header values.
import { Agent, METHODS } from 'node:http';
import type { Express } from 'express';
import fc from 'fast-check';
import { listen, sendRaw, type Answer } from './http-from';

/** One request as generated. */
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
}

/** What came back. */
export type RawAnswer = Answer;

/** A running app and a client for it. */
export interface RawClient {
  send(raw: RawRequest): Promise<RawAnswer>;
  close(): Promise<void>;
}

/** Starts `app` on 127.0.0.1 and returns a keep-alive client for it. */
export async function listenRaw(app: Express): Promise<RawClient> {
  const { port, close } = await listen(app);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    send: (raw) =>
      sendRaw({ port, agent, method: raw.method, path: raw.path, headers: raw.headers }),
    close: async () => {
      agent.destroy();
      await close();
    },
  };
}

/** Characters a request line can carry as they are (Node sends nothing else unescaped). */
const RAW_CHARACTER = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
const ENCODED_BYTE = fc
  .integer({ min: 0, max: 255 })
  .map((b) => `%${b.toString(16).padStart(2, '0')}`);

/** Text of raw characters, percent-encoded bytes (any byte, valid UTF-8 or not) and broken escapes. */
const queryText = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(
      { weight: 4, arbitrary: RAW_CHARACTER },
      { weight: 2, arbitrary: ENCODED_BYTE },
      { weight: 1, arbitrary: fc.constantFrom('%', '%e', '%zz', '+', '&', '=', '[', ']', '#') },
    ),
    maxLength,
  });

/** Stands for a code the platform really issued; the test puts one in before sending. */
export const REAL_CODE = '{real-code}';

const queryKey = fc.oneof(
  fc.constantFrom('code', 'code', 'error', 'state', 'code[]', 'code[a]', 'code[0]', 'CODE'),
  fc.constantFrom('c%6Fde', 'code%00', '%63ode', 'code%20', 'code+', 'error_description', ''),
  queryText(12),
);

const queryValue = fc.oneof(
  { weight: 3, arbitrary: queryText(40) },
  { weight: 1, arbitrary: fc.string({ unit: RAW_CHARACTER, minLength: 1, maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('', REAL_CODE, 'access_denied', 'invalid_scope') },
  // Huge values: past maxCodeLength (512), and far past it (still under Node's 16 KiB header limit).
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.string({ unit: RAW_CHARACTER, minLength: 1, maxLength: 4 }),
        fc.integer({ min: 100, max: 2500 }),
      )
      .map(([unit, times]) => unit.repeat(times).slice(0, 10_000)),
  },
);

/** Longest query sent: with the request line and headers it stays under Node's 16 KiB limit. */
const MAX_QUERY_LENGTH = 12_000;

/** A query string: pairs with repeated keys, bracket syntax, odd separators and any byte. */
export const queryString = fc
  .tuple(
    fc.array(
      fc
        .tuple(queryKey, fc.option(queryValue, { nil: undefined }))
        .map(([key, value]) => (value === undefined ? key : `${key}=${value}`)),
      { maxLength: 6 },
    ),
    fc.constantFrom('&', '&', '&', ';', '&&'),
  )
  .map(([pairs, separator]) => pairs.join(separator).slice(0, MAX_QUERY_LENGTH));

/** Every method Node's HTTP parser accepts (CONNECT opens a tunnel and is left out). */
export const httpMethod = fc.constantFrom(...METHODS.filter((method) => method !== 'CONNECT'));

/** A header value Node's client sends as it is (printable ASCII, tab and Latin-1). */
export const headerValue = fc.string({
  unit: fc.oneof(
    {
      weight: 8,
      arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
    },
    { weight: 1, arbitrary: fc.constant('\t') },
  ),
  maxLength: 60,
});

/** An Accept header: the ones browsers and API clients send, or anything. */
export const acceptHeader = fc.oneof(
  fc.constantFrom(
    'application/json',
    'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    '*/*',
    'text/plain',
    'application/json;q=0, text/html;q=0',
  ),
  headerValue,
);
