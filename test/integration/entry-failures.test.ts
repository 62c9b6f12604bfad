// What counts as a failed entry, against the real simulator and a real Redis: only failures of a code
// that passed the entry guards (no page can lock its visitors' address out); every refusal of a
// code by the platform, never its outages; the platform's Retry-After holds every exchange of every
// process; client addresses normalised (ports, IPv4-mapped, IPv6 /56) and hashed with a shared key;
// a warning when X-Forwarded-For arrives untrusted.
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import {
  RedisTokenStore,
  type PlatformLogin,
  type PlatformLoginOptions,
} from 'express-platform-login';
import { createTestApp, TEST_REDIRECT_URI, warningsLogger } from '../helpers/test-app';
import { listen, sendFrom, type Answer } from '../helpers/http-from';
import { valueOnce, waitUntil } from '../helpers/wait-until';
import { PLATFORM, FROM_PLATFORM, FROM_ATTACKER, JSON_ACCEPT } from '../helpers/entry-requests';
import { useSimulatorAndRedis } from '../helpers/bed';

/** What an `<img>` on any page sends. */
const AS_IMAGE = {
  'Sec-Fetch-Site': 'cross-site',
  'Sec-Fetch-Mode': 'no-cors',
  'Sec-Fetch-Dest': 'image',
};

let sim: PlatformSimulator;
let redis: Redis;
const { opened, apps } = useSimulatorAndRedis((bed) => ({ sim, redis } = bed));

const issue = (): string => sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
const madeUp = (): string => `made-up-${randomBytes(12).toString('base64url')}`;
const newPrefix = (): string => `failures-${randomBytes(6).toString('hex')}:`;

interface Started {
  port: number;
  login: PlatformLogin;
  prefix: string;
  warnings: string[];
  /** The store operations the app's entries made, as its `storeCall` events name them. */
  storeCalls: string[];
}

/** A test app on a Redis token store of its own prefix, listening; `trustProxy` sets Express's. */
async function start(
  login: Partial<PlatformLoginOptions> = {},
  options: { prefix?: string; trustProxy?: string } = {},
): Promise<Started> {
  const prefix = options.prefix ?? newPrefix();
  const { logger, warnings } = warningsLogger();
  const store = opened(new RedisTokenStore({ redis, prefix }));
  const { app, login: platform } = createTestApp({
    sim,
    login: { platformOrigins: [PLATFORM], store, logger, ...login },
  });
  const storeCalls: string[] = [];
  platform.on('storeCall', ({ operation }) => storeCalls.push(operation));
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);
  const listening = await listen(app);
  apps.push(listening);
  return { port: listening.port, login: platform, prefix, warnings, storeCalls };
}

const enter = (from: string, port: number, code: string, headers: Record<string, string> = {}) =>
  sendFrom(from, port, `/platform/callback?code=${encodeURIComponent(code)}`, {
    headers: { ...FROM_PLATFORM, ...JSON_ACCEPT, ...headers },
  });
const errorOf = (answer: Answer): string => (JSON.parse(answer.body) as { error: string }).error;
const counters = (prefix: string): Promise<string[]> => redis.keys(`${prefix}w:*`);
const claims = (prefix: string): Promise<string[]> => redis.keys(`${prefix}k:*`);

describe('a page cannot lock its visitors out (issue 25 item 1)', () => {
  /** Requests any page can make a visitor's browser send to the callback, none with a usable code. */
  const CODELESS: [string, string, Record<string, string>][] = [
    ['an <img> without a code', '?x=1', AS_IMAGE],
    ['an <img> with `Code` (another parameter)', '?Code=abc', AS_IMAGE],
    ['an <img> with the cookie-check marker', '?cookie_check=1', AS_IMAGE],
    ['a <script> with no query', '', { ...AS_IMAGE, 'Sec-Fetch-Dest': 'script' }],
    ['a navigation from another site without a code', '?x=1', FROM_ATTACKER],
    ['a navigation from the platform without a code', '?x=1', FROM_PLATFORM],
  ];

  test.each([
    ['enforce (platformOrigins given)', {}],
    ["report (entry.context: { mode: 'report' })", { context: { mode: 'report' as const } }],
  ])('%s: 20× each codeless request, then the visitor still enters', async (_mode, login) => {
    const { port, prefix } = await start({ entry: { failureLimit: 3, ...login } });
    for (const [how, query, headers] of CODELESS) {
      for (let i = 0; i < 20; i += 1) {
        const answer = await sendFrom('127.0.0.2', port, `/platform/callback${query}`, {
          headers: { ...headers, ...JSON_ACCEPT },
        });
        // Sub-resources are refused by the guards in every mode; the rest has no code to redeem.
        expect({ how, status: answer.status }).toEqual({
          how,
          status:
            headers === AS_IMAGE || headers['Sec-Fetch-Dest'] === 'script' ? 403 : answer.status,
        });
        expect([400, 403]).toContain(answer.status);
        expect(answer.headers['set-cookie']).toBeUndefined();
      }
    }
    expect(await counters(prefix)).toEqual([]);
    expect(sim.calls.authorization_code).toBe(0);
    // The visitor's real entry is served: nothing counted against their address.
    expect((await enter('127.0.0.2', port, issue())).status).toBe(303);
  });

  test('codes that passed the guards and failed still count: made-up codes reach the limit', async () => {
    const { port } = await start({ entry: { failureLimit: 3 } });
    for (let i = 0; i < 3; i += 1)
      expect((await enter('127.0.0.3', port, madeUp())).status).toBe(400);
    const refused = await enter('127.0.0.3', port, madeUp());
    expect(refused.status).toBe(429);
    expect(errorOf(refused)).toBe('too_many_entries');
    expect(sim.calls.authorization_code).toBe(3);
  });
});

describe('the checks before the exchange, in one store call (issue 27)', () => {
  test('a fresh entry on Redis makes one store call before its code is sent, then one write that gives its count back too (issue 44)', async () => {
    const { port, prefix, storeCalls } = await start({ entry: { failureLimit: 3 } });
    expect((await enter('127.0.0.20', port, issue())).status).toBe(303);
    // Nothing more after the answer: the count went back with the record's write.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(storeCalls).toEqual(['beginEntry', 'put']);
    // A successful entry leaves nothing counted against its address.
    expect(await counters(prefix)).toEqual([]);
  });

  test('an address at its limit in another process: 429 from that one call, the code neither claimed nor sent', async () => {
    const prefix = newPrefix();
    const first = await start({ entry: { failureLimit: 3 } }, { prefix });
    for (let i = 0; i < 3; i += 1)
      expect((await enter('127.0.0.21', first.port, madeUp())).status).toBe(400);
    const other = await start({ entry: { failureLimit: 3 } }, { prefix });
    const code = issue();
    const claimsBefore = await claims(prefix);
    sim.resetCalls();
    const refused = await enter('127.0.0.21', other.port, code);
    expect(refused.status).toBe(429);
    expect(errorOf(refused)).toBe('too_many_entries');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(sim.calls.authorization_code).toBe(0);
    expect(await claims(prefix)).toEqual(claimsBefore);
    // A malformed code from that address gets the same 429 first, not its own 400 (in a process
    // that has not refused the address yet either).
    const third = await start({ entry: { failureLimit: 3 } }, { prefix });
    expect((await enter('127.0.0.21', third.port, 'a b')).status).toBe(429);
    // The player's code is still good, from an address that may enter.
    expect((await enter('127.0.0.22', other.port, code)).status).toBe(303);
  });
});

describe('past the cap of exchanges in flight, the address and the hold answer first', () => {
  test("an address at its limit in another process gets 429, not the cap's 503, its code unclaimed", async () => {
    const prefix = newPrefix();
    const counting = await start({ entry: { failureLimit: 3 } }, { prefix });
    for (let i = 0; i < 3; i += 1)
      expect((await enter('127.0.0.31', counting.port, madeUp())).status).toBe(400);
    const capped = await start({ entry: { failureLimit: 3, maxExchangesInFlight: 1 } }, { prefix });
    sim.resetCalls();
    sim.injectFault({ kind: 'latency', ms: 1500 }, { times: 1 });
    const inFlight = enter('127.0.0.32', capped.port, issue());
    const deadline = Date.now() + 10_000;
    while (sim.calls.authorization_code < 1) {
      if (Date.now() > deadline) throw new Error('the first exchange never reached the platform');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const claimsBefore = await claims(prefix);
    const refused = await enter('127.0.0.31', capped.port, issue());
    expect(refused.status).toBe(429);
    expect(errorOf(refused)).toBe('too_many_entries');
    expect(await claims(prefix)).toEqual(claimsBefore);
    // Another address, while the cap is still full: the cap's own 503.
    const busy = await enter('127.0.0.33', capped.port, issue());
    expect(busy.status).toBe(503);
    expect(errorOf(busy)).toBe('platform_busy');
    expect((await inFlight).status).toBe(303);
    expect(sim.calls.authorization_code).toBe(1);
  });
});

describe("the platform's refusals count, its outages do not (issue 25 item 2)", () => {
  test.each([
    ['400 with a text body', { kind: 'status' as const, status: 400 }],
    ['403 with a text body', { kind: 'status' as const, status: 403 }],
    [
      'invalid_request in a 200 body',
      { kind: 'error-body-200' as const, error: 'invalid_request' },
    ],
    ['an HTML page with 200', { kind: 'html' as const }],
    ['a redirect', { kind: 'redirect' as const, location: 'https://platform.example/login' }],
  ])(
    '%s: counted, so an address gets no more than the limit of platform calls',
    async (_how, fault) => {
      const { port } = await start({ entry: { failureLimit: 3 } });
      sim.injectFault(fault, { grant: 'authorization_code' });
      const statuses: number[] = [];
      for (let i = 0; i < 10; i += 1)
        statuses.push((await enter('127.0.0.4', port, madeUp())).status);
      expect(statuses.slice(3)).toEqual(Array(7).fill(429));
      expect(sim.calls.authorization_code).toBe(3);
    },
  );

  test.each([
    ['503 without Retry-After', { kind: 'status' as const, status: 503 }],
    ['500', { kind: 'status' as const, status: 500 }],
    ['a reset connection', { kind: 'reset' as const }],
  ])("%s: the platform's outage is not held against the players' address", async (_how, fault) => {
    const { port, prefix } = await start({ entry: { failureLimit: 3 } });
    sim.injectFault(fault, { grant: 'authorization_code' });
    for (let i = 0; i < 6; i += 1) {
      const answer = await enter('127.0.0.5', port, issue());
      expect([502, 504]).toContain(answer.status);
    }
    expect(await counters(prefix)).toEqual([]);
    sim.clearFaults();
    expect((await enter('127.0.0.5', port, issue())).status).toBe(303);
  });
});

describe("the platform's Retry-After holds code exchanges (issue 25 item 2, issue 41 item 1)", () => {
  test('429 with Retry-After: addresses with failed entries wait it out on every process, their codes unclaimed', async () => {
    const prefix = newPrefix();
    const a = await start({ entry: { failureLimit: 5 } }, { prefix });
    const b = await start({ entry: { failureLimit: 5 } }, { prefix });
    // An address whose made-up code the platform refused before it throttled.
    expect((await enter('127.0.0.7', a.port, madeUp())).status).toBe(400);
    // Held long enough for 300 entries on a loaded machine (how a hold ends is the next tests').
    sim.injectFault({ kind: 'throttle', retryAfterSeconds: 30 }, { grant: 'authorization_code' });

    const first = await enter('127.0.0.6', a.port, madeUp());
    expect(first.status).toBe(503);
    expect(errorOf(first)).toBe('platform_busy');
    expect(Number(first.headers['retry-after'])).toBe(30);
    expect(sim.calls.authorization_code).toBe(2);

    // 300 entries from the address with failures, on both processes, while held: none is sent.
    for (let i = 0; i < 150; i += 1) {
      for (const port of [a.port, b.port]) {
        const held = await enter('127.0.0.7', port, madeUp());
        expect(held.status).toBe(503);
        expect(errorOf(held)).toBe('platform_busy');
        const left = Number(held.headers['retry-after']);
        expect(left).toBeGreaterThanOrEqual(1);
        expect(left).toBeLessThanOrEqual(30);
      }
    }
    expect(sim.calls.authorization_code).toBe(2);
    expect(await claims(prefix)).toHaveLength(2);
  }, 60_000);

  test('while held, addresses with no failure probe the platform one a second; an answered probe ends the hold', async () => {
    const prefix = newPrefix();
    const a = await start({ entry: { failureLimit: 5 } }, { prefix });
    const b = await start({ entry: { failureLimit: 5 } }, { prefix });
    const holds: boolean[] = [];
    a.login.on('exchangeHold', (e) => holds.push(e.held));
    b.login.on('exchangeHold', (e) => holds.push(e.held));
    expect((await enter('127.0.0.7', a.port, madeUp())).status).toBe(400);
    sim.injectFault({ kind: 'throttle', retryAfterSeconds: 300 }, { grant: 'authorization_code' });
    expect((await enter('127.0.0.6', a.port, madeUp())).status).toBe(503);
    expect(holds).toEqual([true]);

    // A real player from an address with no failure is this second's probe; the platform still
    // throttles, so the hold goes on; another such player in the same second waits a second only.
    const player = await enter('127.0.0.8', b.port, issue());
    expect(player.status).toBe(503);
    expect(sim.calls.authorization_code).toBe(3);
    const genuine = issue();
    const next = await enter('127.0.0.9', a.port, genuine);
    expect(next.status).toBe(503);
    expect(errorOf(next)).toBe('platform_busy');
    expect(Number(next.headers['retry-after'])).toBe(1);
    expect(sim.calls.authorization_code).toBe(3);

    // The platform recovers: the next probe enters and ends the hold for everyone.
    sim.clearFaults();
    await waitUntil(
      async () => (await enter('127.0.0.9', b.port, genuine)).status === 303,
      'the probe to enter',
    );
    // The hold ends once the probe's answer is settled, just after the player got it.
    await waitUntil(() => holds.at(-1) === false, 'the hold to end');
    // An address with failures enters again (a held entry makes no platform call, so asking
    // again until the other process sees the hold gone costs the platform nothing).
    const again = issue();
    expect(
      await valueOnce(
        async () => (await enter('127.0.0.7', a.port, again)).status,
        (status) => status !== 503,
        2_000,
      ),
    ).toBe(303);
    expect(sim.calls.authorization_code).toBe(5);
  }, 30_000);

  test('503 with Retry-After holds as well, and counts against nobody', async () => {
    const { port, prefix } = await start({ entry: { failureLimit: 2 } });
    sim.injectFault(
      { kind: 'status', status: 503, retryAfterSeconds: 2 },
      { grant: 'authorization_code', times: 1 },
    );
    const first = await enter('127.0.0.9', port, issue());
    expect(first.status).toBe(503);
    expect(errorOf(first)).toBe('platform_busy');
    expect(Number(first.headers['retry-after'])).toBe(2);
    expect(await counters(prefix)).toEqual([]);
  });
});

describe('client addresses (issue 25 items 9, 10, 12)', () => {
  /** Entries from the loopback proxy, for the client X-Forwarded-For names. */
  const viaProxy = (port: number, forwardedFor: string) =>
    enter('127.0.0.1', port, madeUp(), { 'X-Forwarded-For': forwardedFor });

  test('a port appended by the proxy gives no fresh counter: the limit holds', async () => {
    const { port } = await start({ entry: { failureLimit: 3 } }, { trustProxy: 'loopback' });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      statuses.push((await viaProxy(port, `198.51.100.7:${40_000 + i}`)).status);
    }
    expect(statuses).toEqual([400, 400, 400, 429, 429, 429, 429, 429]);
    expect(sim.calls.authorization_code).toBe(3);
    // Another client behind the same proxy is its own.
    expect((await viaProxy(port, '198.51.100.8:40000')).status).toBe(400);
  });

  test('IPv4-mapped IPv6 in any spelling is its IPv4 address; IPv6 counts by its /56', async () => {
    const { port } = await start(
      { entry: { failureLimit: 3, failedExchangesPerSecond: 0 } },
      { trustProxy: 'loopback' },
    );
    for (const spelling of ['198.51.100.9', '::ffff:198.51.100.9', '::FFFF:C633:6409']) {
      expect((await viaProxy(port, spelling)).status).toBe(400);
    }
    expect((await viaProxy(port, '[::ffff:198.51.100.9]:1234')).status).toBe(429);
    for (const spelling of [
      '2001:db8:aa:100::1',
      '2001:DB8:AA:1FF::2',
      '2001:db8:aa:1ab:ffff::3',
    ]) {
      expect((await viaProxy(port, spelling)).status).toBe(400);
    }
    expect((await viaProxy(port, '[2001:db8:aa:1cd::4]:443')).status).toBe(429);
    expect((await viaProxy(port, '2001:db8:aa:200::1')).status).toBe(400); // another /56
  });

  test('entryFailureIpv6Subnet: 64 counts each /64 on its own', async () => {
    const { port } = await start(
      { entry: { failureLimit: 1, ipv6Subnet: 64 } },
      { trustProxy: 'loopback' },
    );
    expect((await viaProxy(port, '2001:db8:bb:1::1')).status).toBe(400);
    expect((await viaProxy(port, '2001:db8:bb:1::2')).status).toBe(429);
    expect((await viaProxy(port, '2001:db8:bb:2::1')).status).toBe(400);
  });

  test('an address that does not parse is warned about once', async () => {
    const { port, warnings } = await start(
      { entry: { failureLimit: 5 } },
      { trustProxy: 'loopback' },
    );
    for (const value of ['unknown', 'proxy.internal', 'unknown']) await viaProxy(port, value);
    const found = warnings.filter((message) => message.includes('is not an IP address'));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/trust proxy/);
    expect(found[0]).not.toMatch(/unknown|proxy\.internal/);
  });

  test('X-Forwarded-For that Express does not trust: one warning naming `trust proxy`; trusted: none', async () => {
    const untrusted = await start();
    for (let i = 0; i < 3; i += 1) {
      await enter('127.0.0.1', untrusted.port, issue(), { 'X-Forwarded-For': '198.51.100.10' });
    }
    const about = (warnings: string[]) => warnings.filter((w) => w.includes('X-Forwarded-For'));
    expect(about(untrusted.warnings)).toHaveLength(1);
    expect(about(untrusted.warnings)[0]).toMatch(/app\.set\('trust proxy', 1\)/);

    const trusted = await start({}, { trustProxy: 'loopback' });
    await enter('127.0.0.1', trusted.port, issue(), { 'X-Forwarded-For': '198.51.100.10' });
    await enter('127.0.0.1', trusted.port, issue());
    expect(about(trusted.warnings)).toEqual([]);
    // No header, no warning.
    const direct = await start();
    await enter('127.0.0.1', direct.port, issue());
    expect(about(direct.warnings)).toEqual([]);
  });

  test('the stored counter is keyed: neither the address nor a bare SHA-256 of it names it', async () => {
    const { port, prefix } = await start({ entry: { failureLimit: 3 } });
    await enter('127.0.0.11', port, madeUp());
    // The address's count, and its count of failures alone beside it.
    const keys = (await counters(prefix)).sort();
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(`${keys[0]}:failed`);
    const bare = (value: string) =>
      createHash('sha256').update(value).digest('base64url').slice(0, 22);
    for (const key of keys) {
      for (const guess of ['127.0.0.11', 'address:127.0.0.11']) {
        expect(key).not.toContain(bare(guess));
      }
      expect(key).not.toContain('127.0.0.11');
    }
  });
});
