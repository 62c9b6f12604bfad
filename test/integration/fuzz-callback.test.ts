// Property-based fuzzing of the entry, GET /platform/callback: thousands of generated query strings
// (any byte, percent-encoding, repeated keys, bracket syntax, huge values), methods and headers.
// Only the README's statuses come back, never a 500; the platform is never asked about a code
// that is not exactly one value of 1–512 printable ASCII characters; a refused entry sets no cookie.
import fc from 'fast-check';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { MemoryTokenStore } from 'express-platform-login';
import {
  acceptHeader,
  headerValue,
  httpMethod,
  listenRaw,
  queryString,
  REAL_CODE,
  type RawAnswer,
  type RawClient,
} from '../helpers/fuzz-http';
import { createTestApp, TEST_REDIRECT_URI } from '../helpers/test-app';

/** The `error` codes of the README's table that an entry can answer with. */
const ENTRY_ERRORS = new Set([
  'invalid_request',
  'code_already_used',
  'code_rejected',
  'access_denied',
  'method_not_allowed',
  'platform_error',
  'platform_timeout',
]);
const MAX_CODE_LENGTH = 512;

let sim: PlatformSimulator;
let client: RawClient;

beforeAll(async () => {
  sim = await startSimulator();
  const store = new MemoryTokenStore({ maxEntries: 100_000 });
  client = await listenRaw(createTestApp({ sim, login: { store } }).app);
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

/** Calls the platform received so far, of any kind. */
const platformCalls = (): number =>
  sim.calls.authorization_code + sim.calls.refresh_token + sim.calls.invalid;

/**
 * The README's rule, read independently of the package: the platform may be asked only about an
 * entry with no `error` and exactly one `code` of 1–512 printable ASCII characters.
 */
function codeToRedeem(query: string): string | undefined {
  const params = new URLSearchParams(query);
  const codes = params.getAll('code');
  if (params.has('error') || codes.length !== 1) return undefined;
  const code = codes[0]!;
  return code.length <= MAX_CODE_LENGTH && /^[\x21-\x7e]+$/.test(code) ? code : undefined;
}

/** Extra headers a browser, a proxy or an attacker may send. */
const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'cookie',
    'referer',
    'origin',
    'user-agent',
    'content-type',
    'x-forwarded-for',
    'x-forwarded-proto',
    'sec-fetch-site',
    'sec-fetch-dest',
    'x-requested-with',
  ),
  headerValue,
  { maxKeys: 4 },
);

/** Sends one entry, a real fresh code in place of REAL_CODE; resolves what the test checks. */
async function entry(method: string, generated: string, headers: Record<string, string>) {
  const realCode = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
  const query = generated.split(REAL_CODE).join(encodeURIComponent(realCode));
  const before = platformCalls();
  const answer = await client.send({ method, path: `/platform/callback?${query}`, headers });
  return { answer, query, realCode, calls: platformCalls() - before };
}

/** The body is the documented JSON error (or the HTML page), and a cookie comes only with a landing. */
function expectDocumentedRefusal(answer: RawAnswer, query: string): void {
  expect(answer.headers['set-cookie']).toBeUndefined();
  expect(answer.headers['cache-control']).toBe('no-store');
  const type = answer.headers['content-type'] ?? '';
  if (type.startsWith('application/json')) {
    const { error } = JSON.parse(answer.body) as { error: string };
    // An `error` from the platform is echoed as its code, reduced to [A-Za-z0-9_].
    const echoed = new URLSearchParams(query).has('error') && /^[a-z0-9_]{1,64}$/i.test(error);
    expect(ENTRY_ERRORS.has(error) || echoed).toBe(true);
    if (answer.status === 403) expect(error).toBe('access_denied');
  } else if (answer.body !== '') {
    expect(type).toMatch(/^text\/html/);
  }
}

test('GET with any query and headers: a documented answer, and the platform only asked about a well-formed code', async () => {
  await fc.assert(
    fc.asyncProperty(
      queryString,
      acceptHeader,
      extraHeaders,
      async (generated, accept, headers) => {
        const { answer, query, realCode, calls } = await entry('GET', generated, {
          ...headers,
          accept,
        });
        const code = codeToRedeem(query);
        if (code === undefined) {
          expect(calls).toBe(0);
          expect([400, 403]).toContain(answer.status);
          expectDocumentedRefusal(answer, query);
        } else if (code === realCode) {
          expect(calls).toBe(1);
          expect(answer.status).toBe(303);
          expect(answer.headers.location).toBe('/');
          expect(String(answer.headers['set-cookie'])).toMatch(/^connect\.sid=/);
        } else {
          // A well-formed code the platform never issued: sent once (code_rejected), or not at all
          // when this run generated it before (code_already_used).
          expect(calls).toBeLessThanOrEqual(1);
          expect(answer.status).toBe(400);
          expectDocumentedRefusal(answer, query);
        }
      },
    ),
    { numRuns: 1500 },
  );
});

test('any other method, whatever the query and headers: 405 with Allow: GET, no platform call, no cookie', async () => {
  const notGet = httpMethod.filter((method) => method !== 'GET');
  await fc.assert(
    fc.asyncProperty(
      notGet,
      queryString,
      acceptHeader,
      extraHeaders,
      async (method, generated, accept, headers) => {
        const { answer, query, calls } = await entry(method, `code=${REAL_CODE}&${generated}`, {
          ...headers,
          accept,
        });
        expect(calls).toBe(0);
        expect(answer.status).toBe(405);
        expect(answer.headers.allow).toBe('GET');
        if (method === 'HEAD') expect(answer.body).toBe('');
        expectDocumentedRefusal(answer, query);
      },
    ),
    { numRuns: 500 },
  );
});
