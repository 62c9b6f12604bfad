// What a hostile or broken platform can put in its token answers, sent by the simulator's fault
// knobs over HTTP to a game on a real Redis: a scope entry with control characters is refused like
// an open_id with one; open_ids that differ only in lone surrogates stay two players; the
// platform's markup and control characters reach no log line as they came (docs/entry-trust.md).
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Redis } from 'ioredis';
import { RedisTokenStore, type PlatformLogger } from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { createTestApp, TEST_REDIRECT_URI } from '../helpers/test-app';
import { enter } from '../helpers/records';

const JSON_ACCEPT = { Accept: 'application/json' };

let sim: PlatformSimulator;
let redis: Redis;
let store: RedisTokenStore;
let prefix: string;

/** Every line the package logged, at any level: its message and field values, as one string each. */
const lines: string[] = [];
const capture = (level: string) => (fields: Record<string, unknown>, message: string) =>
  void lines.push([level, message, ...Object.values(fields).map(String)].join(' '));
/** Control characters (a line break included), and a reordering override. */
const CONTROL = /[\p{Cc}\u202e]/u;
const logger: PlatformLogger = {
  debug: capture('debug'),
  info: capture('info'),
  warn: capture('warn'),
  error: capture('error'),
};

beforeAll(async () => {
  sim = await startSimulator();
  redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  redis.disconnect();
  await sim.close();
});
beforeEach(() => {
  prefix = `hostile-${randomBytes(4).toString('hex')}:`;
  store = new RedisTokenStore({ redis, prefix });
  lines.length = 0;
});
afterEach(async () => {
  sim.clearFaults();
  await store.close();
});

const newGame = () => createTestApp({ sim, login: { store, logger } }).app;

/** The next code exchange answers with `field` set to `value`, as a hostile platform would. */
const nextExchangeSets = (field: string, value: unknown): void =>
  sim.injectFault({ kind: 'field', field, value }, { grant: 'authorization_code', times: 1 });

test.each([
  ['a control character', 'user_info,bas\u0007ic'],
  ['a terminal escape sequence', 'user_info,\u001b[2Jadmin'],
  ['a C1 control character', 'user_info\u0085'],
])(
  'a scope entry with %s is refused at the entry like an open_id with one: nothing stored',
  async (_what, scope) => {
    const app = newGame();
    nextExchangeSets('scope', scope);
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
    const res = await request(app)
      .get(`/platform/callback?code=${encodeURIComponent(code)}`)
      .set(JSON_ACCEPT);
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: 'platform_error' });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(sim.calls.authorization_code).toBeGreaterThanOrEqual(1);
    expect(await redis.keys(`${prefix}*:t`)).toEqual([]);
    // The answer is named by its field, never quoted.
    expect(lines.some((line) => line.includes('scope must be'))).toBe(true);
    for (const line of lines) expect(line).not.toMatch(CONTROL);
  },
);

test('open_ids that differ only in a lone surrogate are two players: logging one out leaves the other', async () => {
  const app = newGame();
  nextExchangeSets('open_id', 'sur\ud800');
  const first = await enter(app, sim);
  nextExchangeSets('open_id', 'sur\udbff');
  const second = await enter(app, sim);
  expect((await first.agent.get('/api/me')).body.openId).toBe('sur\ud800');
  expect((await second.agent.get('/api/me')).body.openId).toBe('sur\udbff');
  // One player index each in Redis, not one shared.
  expect(await redis.keys(`${prefix}p:*`)).toHaveLength(2);

  const { login } = createTestApp({ sim, login: { store, logger } });
  expect(await login.logoutPlayer('sur\ud800')).toBe(1);
  expect((await first.agent.get('/api/me').set(JSON_ACCEPT)).status).toBe(401);
  const still = await second.agent.get('/api/me').set(JSON_ACCEPT);
  expect(still.status).toBe(200);
  expect(still.body.openId).toBe('sur\udbff');
  // And the well-formed string both once hashed alike has no logins to end.
  expect(await login.logoutPlayer('sur\ufffd')).toBe(0);
  expect((await second.agent.get('/api/me').set(JSON_ACCEPT)).status).toBe(200);
});

test("the platform's markup and control characters reach no log line as they came", async () => {
  const app = newGame();
  // A refused exchange: the platform's own words are kept in the message, and logged.
  sim.injectFault(
    {
      kind: 'error-body-200',
      error: 'invalid_grant',
      errorDescription: '<script>alert(1)</script> code &amp; \u202euser\r\nforged line',
    },
    { grant: 'authorization_code', times: 1 },
  );
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
  const refused = await request(app)
    .get(`/platform/callback?code=${encodeURIComponent(code)}`)
    .set(JSON_ACCEPT);
  expect(refused.status).toBe(400);
  // An open_id with markup is an identifier like another: it enters, and is logged escaped.
  nextExchangeSets('open_id', '<img src=x onerror=alert(2)>');
  const { agent } = await enter(app, sim);
  expect((await agent.get('/api/me')).body.openId).toBe('<img src=x onerror=alert(2)>');
  expect((await agent.post('/logout').set(JSON_ACCEPT)).status).toBe(204);

  const log = lines.join('\n');
  expect(log).toContain('\\u003cscript\\u003ealert(1)\\u003c/script\\u003e code \\u0026amp;');
  expect(log).toContain('\\u003cimg src=x onerror=alert(2)\\u003e');
  expect(lines.filter((line) => line.includes('\\u003cimg'))).toHaveLength(2); // entered, logged out
  for (const line of lines) expect(line).not.toMatch(/[<>]|&amp;/);
  for (const line of lines) expect(line).not.toMatch(CONTROL);
});
