// Trust at the entry, against the real simulator and a real Redis: forged entries on every path
// spelling and from sub-resources claim nothing, send nothing and leave the victim's login as it
// was; made-up codes are bounded per client address across processes; the exchanges in flight are
// capped; logout answers POST only; platformFetch stays under apiUrl by whole path segments.
// Runs on Express 5 (integration); the path spellings and logout mounting run on Express 4 too,
// in test/express4/express-version.test.ts.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { platformLogin, RedisTokenStore, type PlatformLoginOptions } from 'express-platform-login';
import { createTestApp, entryApp, loginOptions, TEST_REDIRECT_URI } from '../helpers/test-app';
import { listen, sendFrom, type Answer } from '../helpers/http-from';
import {
  cookieOf,
  expectLogoutPostOnly,
  FROM_PLATFORM,
  JSON_ACCEPT,
  PLATFORM,
  SPELLINGS,
} from '../helpers/entry-requests';
import { useSimulatorAndRedis } from '../helpers/bed';
import { studioStore } from '../helpers/records';

/** How an attacker gets a victim's browser to send an entry. */
const FORGERIES: [string, Record<string, string>][] = [
  [
    'a navigation from an attacker page',
    { ...FROM_PLATFORM, Referer: 'https://attacker.example/' },
  ],
  [
    'an <img>',
    { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors', 'Sec-Fetch-Dest': 'image' },
  ],
  [
    'a <script>',
    { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors', 'Sec-Fetch-Dest': 'script' },
  ],
  [
    'fetch()',
    { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'cors', 'Sec-Fetch-Dest': 'empty' },
  ],
  [
    'a link in an e-mail',
    { 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' },
  ],
  ['a client that sends no context', {}],
];

let sim: PlatformSimulator;
let redis: Redis;
const { opened, apps } = useSimulatorAndRedis((bed) => ({ sim, redis } = bed));

const issue = (openId = 'player-ada'): string =>
  sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId });
const madeUp = (): string => `made-up-${randomBytes(12).toString('base64url')}`;

/** A test app on a Redis token store of its own prefix; resolves it listening, and its prefix. */
async function start(login: Partial<PlatformLoginOptions> = {}, prefix = newPrefix()) {
  const store = opened(new RedisTokenStore({ redis, prefix }));
  const { app } = createTestApp({ sim, login: { platformOrigins: [PLATFORM], store, ...login } });
  const listening = await listen(app);
  apps.push(listening);
  return { port: listening.port, prefix };
}
const newPrefix = (): string => `trust-${randomBytes(6).toString('hex')}:`;
const claimKeys = (prefix: string): Promise<string[]> => redis.keys(`${prefix}k:*`);

describe('forged entries, on every path spelling', () => {
  test.each(FORGERIES)(
    '%s: refused on every spelling, nothing claimed or sent, the victim still logged in, the code still good',
    async (_how, forged) => {
      const { port, prefix } = await start();
      // The victim is logged in as themselves.
      const victim = await sendFrom(
        '127.0.0.1',
        port,
        `/platform/callback?code=${issue('player-ada')}`,
        {
          headers: FROM_PLATFORM,
        },
      );
      expect(victim.status).toBe(303);
      const cookie = cookieOf(victim);
      const claimsBefore = await claimKeys(prefix);
      expect(claimsBefore).toHaveLength(1);

      // The attacker's unused code, sent from the victim's browser on every spelling.
      const attackerCode = issue('player-cy');
      for (const path of SPELLINGS) {
        const answer = await sendFrom('127.0.0.1', port, `${path}?code=${attackerCode}`, {
          headers: { ...forged, ...JSON_ACCEPT, Cookie: cookie },
        });
        expect({ path, status: answer.status }).toEqual({
          path,
          status: answer.status === 404 ? 404 : 403,
        });
        if (answer.status === 403)
          expect(JSON.parse(answer.body)).toEqual({ error: 'entry_context_refused' });
        expect(answer.headers['set-cookie']).toBeUndefined();
      }
      expect(sim.calls.authorization_code).toBe(1); // the victim's own entry only
      expect(await claimKeys(prefix)).toEqual(claimsBefore);

      const me = await sendFrom('127.0.0.1', port, '/api/me', {
        headers: { ...JSON_ACCEPT, Cookie: cookie },
      });
      expect(me.status).toBe(200);
      expect(JSON.parse(me.body)).toMatchObject({ openId: 'player-ada' });

      // The attacker's code was not burnt: a genuine entry from the platform still redeems it.
      const genuine = await sendFrom('127.0.0.1', port, `/platform/callback?code=${attackerCode}`, {
        headers: FROM_PLATFORM,
      });
      expect(genuine.status).toBe(303);
      expect(sim.calls.authorization_code).toBe(2);
    },
  );

  test('the spellings that reach the callback are refused there, not skipped (the Express 5 `//` case)', async () => {
    const { port } = await start();
    for (const path of ['/platform/callback', '/platform/callback/', '/PLATFORM/CALLBACK']) {
      const answer = await sendFrom('127.0.0.1', port, `${path}?code=${issue()}`, {
        headers: { ...FORGERIES[0]![1], ...JSON_ACCEPT },
      });
      expect({ path, status: answer.status }).toEqual({ path, status: 403 });
    }
    // Whatever the router makes of `//`, it never lands: refused (Express 5) or not found (Express 4).
    const doubled = await sendFrom('127.0.0.1', port, `/platform/callback//?code=${issue()}`, {
      headers: { ...FORGERIES[0]![1], ...JSON_ACCEPT },
    });
    expect([403, 404]).toContain(doubled.status);
    expect(sim.calls.authorization_code).toBe(0);
  });

  test('a genuine entry is served on any spelling the router matches', async () => {
    const { port } = await start();
    for (const path of ['/platform/callback/', '/PLATFORM/CALLBACK']) {
      const answer = await sendFrom('127.0.0.1', port, `${path}?code=${issue()}`, {
        headers: FROM_PLATFORM,
      });
      expect({ path, status: answer.status }).toEqual({ path, status: 303 });
    }
  });
});

describe('failed entries per client address', () => {
  const enter = (from: string, port: number, code: string) =>
    sendFrom(from, port, `/platform/callback?code=${code}`, {
      headers: { ...FROM_PLATFORM, ...JSON_ACCEPT },
    });

  test('made-up codes: 20 sent to the platform, then 429 too_many_entries with Retry-After, nothing claimed or sent; another address is unaffected', async () => {
    // The budget of failed exchanges per second off: this is the per-address limit alone.
    const { port, prefix } = await start({ entry: { failedExchangesPerSecond: 0 } });
    const answers: Answer[] = [];
    for (let i = 0; i < 30; i += 1) answers.push(await enter('127.0.0.2', port, madeUp()));
    expect(answers.slice(0, 20).map((a) => a.status)).toEqual(Array(20).fill(400));
    for (const answer of answers.slice(20)) {
      expect(answer.status).toBe(429);
      expect(JSON.parse(answer.body)).toEqual({ error: 'too_many_entries' });
      const retryAfter = Number(answer.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(600);
      expect(answer.headers['set-cookie']).toBeUndefined();
    }
    expect(sim.calls.authorization_code).toBe(20);
    expect(await claimKeys(prefix)).toHaveLength(20);

    // Even a genuine code from that address waits, and is not burnt meanwhile.
    const held = issue();
    expect((await enter('127.0.0.2', port, held)).status).toBe(429);
    expect(await claimKeys(prefix)).toHaveLength(20);
    expect(sim.calls.authorization_code).toBe(20);

    // Another address: served, and its own failures still reach the platform.
    expect((await enter('127.0.0.3', port, held)).status).toBe(303);
    expect((await enter('127.0.0.3', port, madeUp())).status).toBe(400);
    expect(sim.calls.authorization_code).toBe(22);
  });

  test('successful entries never count: a busy address behind one NAT keeps entering', async () => {
    const { port } = await start({ entry: { failureLimit: 3 } });
    for (let i = 0; i < 12; i += 1) {
      expect((await enter('127.0.0.4', port, issue())).status).toBe(303);
    }
    for (let i = 0; i < 3; i += 1)
      expect((await enter('127.0.0.4', port, madeUp())).status).toBe(400);
    expect((await enter('127.0.0.4', port, madeUp())).status).toBe(429);
  });

  test('the counts are shared by every process on the store', async () => {
    const prefix = newPrefix();
    const a = await start({ entry: { failureLimit: 4 } }, prefix);
    const b = await start({ entry: { failureLimit: 4 } }, prefix);
    for (const port of [a.port, b.port, a.port, b.port]) {
      expect((await enter('127.0.0.5', port, madeUp())).status).toBe(400);
    }
    expect((await enter('127.0.0.5', a.port, madeUp())).status).toBe(429);
    expect((await enter('127.0.0.5', b.port, madeUp())).status).toBe(429);
    expect(sim.calls.authorization_code).toBe(4);
    // What Redis holds for it: its count and its count of failures alone, each with its window's
    // expiry, and no address in the keys; and the second's budget of exchanges from addresses with
    // failures, which the three after the first spent.
    const budget = `${prefix}w:code-exchange-budget`;
    const counters = (await redis.keys(`${prefix}w:*`)).filter((key) => key !== budget).sort();
    expect(counters).toHaveLength(2);
    expect(counters[1]).toBe(`${counters[0]}:failed`);
    for (const key of counters) {
      expect(key).not.toContain('127.0.0.5');
      expect(await redis.pttl(key)).toBeGreaterThan(0);
    }
    // Stored as `<version>|<count>`.
    expect((await redis.get(counters[0]!))?.split('|')[1]).toBe('4');
  });

  test('used codes and malformed codes count; refused entry contexts do not (they cost nothing)', async () => {
    const { port } = await start({ entry: { failureLimit: 3 } });
    const code = issue();
    expect((await enter('127.0.0.6', port, code)).status).toBe(303);
    const fromElsewhere = await sendFrom('127.0.0.6', port, `/platform/callback?code=${code}`, {
      headers: { ...FROM_PLATFORM, ...JSON_ACCEPT },
    });
    expect(JSON.parse(fromElsewhere.body)).toEqual({ error: 'code_already_used' });
    for (let i = 0; i < 10; i += 1) {
      const forged = await sendFrom('127.0.0.6', port, `/platform/callback?code=${madeUp()}`, {
        headers: { ...FORGERIES[1]![1], ...JSON_ACCEPT },
      });
      expect(forged.status).toBe(403);
    }
    expect((await enter('127.0.0.6', port, 'a%20b')).status).toBe(400); // malformed
    expect((await enter('127.0.0.6', port, madeUp())).status).toBe(400);
    expect((await enter('127.0.0.6', port, madeUp())).status).toBe(429);
  });

  test("a studio's own store counts failed entries through the contract's four methods", async () => {
    const store = studioStore();
    const { app } = createTestApp({
      sim,
      login: { platformOrigins: [PLATFORM], store, entry: { failureLimit: 2 } },
    });
    const listening = await listen(app);
    apps.push(listening);
    for (let i = 0; i < 2; i += 1)
      expect((await enter('127.0.0.12', listening.port, madeUp())).status).toBe(400);
    expect((await enter('127.0.0.12', listening.port, madeUp())).status).toBe(429);
    expect(sim.calls.authorization_code).toBe(2);
    expect((await enter('127.0.0.13', listening.port, issue())).status).toBe(303);
  });

  test('entryFailureLimit: 0 turns the limit off', async () => {
    const { port } = await start({ entry: { failureLimit: 0 } });
    for (let i = 0; i < 25; i += 1)
      expect((await enter('127.0.0.7', port, madeUp())).status).toBe(400);
    expect(sim.calls.authorization_code).toBe(25);
  });
});

describe('exchanges in flight per process', () => {
  test('past entry.maxExchangesInFlight: 503 platform_busy with Retry-After, the code unclaimed and still good', async () => {
    const { port, prefix } = await start({ entry: { maxExchangesInFlight: 1, failureLimit: 0 } });
    sim.injectFault({ kind: 'latency', ms: 1500 }, { times: 1 });
    const first = issue();
    const inFlight = sendFrom('127.0.0.1', port, `/platform/callback?code=${first}`, {
      headers: FROM_PLATFORM,
    });
    const waitForCall = async (): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (sim.calls.authorization_code < 1) {
        if (Date.now() > deadline) throw new Error('the first exchange never reached the platform');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    await waitForCall();
    const second = issue();
    const busy = await sendFrom('127.0.0.1', port, `/platform/callback?code=${second}`, {
      headers: { ...FROM_PLATFORM, ...JSON_ACCEPT },
    });
    expect(busy.status).toBe(503);
    expect(JSON.parse(busy.body)).toEqual({ error: 'platform_busy' });
    expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await claimKeys(prefix)).toHaveLength(1);
    expect((await inFlight).status).toBe(303);
    const later = await sendFrom('127.0.0.1', port, `/platform/callback?code=${second}`, {
      headers: FROM_PLATFORM,
    });
    expect(later.status).toBe(303);
    expect(sim.calls.authorization_code).toBe(2);
  });
});

describe('logout answers POST only, wherever it is mounted', () => {
  test.each(['use', 'get', 'all'] as const)(
    'app.%s: GET and HEAD are 405 with Allow: POST, the player stays logged in',
    async (mount) => {
      const login = platformLogin(loginOptions(sim, { platformOrigins: [PLATFORM] }));
      const app = entryApp(login);
      app.get('/api/me', login.middleware(), (req, res) => {
        res.json(req.platformUser);
      });
      app[mount]('/logout', login.logout());
      const { port } = await listen(app).then((listening) => (apps.push(listening), listening));
      await expectLogoutPostOnly(port, issue(), mount);
    },
  );
});

describe('platformFetch stays under apiUrl by whole path segments', () => {
  test('/v1 admits /v1/userinfo, never /v1evil', async () => {
    const login = platformLogin(
      loginOptions(sim, { api: { url: `${sim.url}/v1` }, entry: { failureLimit: 0 } }),
    );
    const app = entryApp(login);
    app.get('/api/fetch', login.middleware(), async (req, res) => {
      try {
        const answer = await req.platformFetch!(String(req.query.url));
        res.json({ status: answer.status });
      } catch (error) {
        res.json({ refused: (error as Error).name });
      }
    });
    const { port } = await listen(app).then((listening) => (apps.push(listening), listening));
    const entry = await sendFrom('127.0.0.1', port, `/platform/callback?code=${issue()}`);
    const cookie = cookieOf(entry);
    const ask = async (url: string) =>
      JSON.parse(
        (
          await sendFrom('127.0.0.1', port, `/api/fetch?url=${encodeURIComponent(url)}`, {
            headers: { Cookie: cookie },
          })
        ).body,
      ) as { status?: number; refused?: string };
    sim.resetCalls();
    expect(await ask(`${sim.url}/v1evil/userinfo`)).toEqual({ refused: 'TypeError' });
    expect(await ask(`${sim.url}/v1/../userinfo`)).toEqual({ refused: 'TypeError' });
    expect(sim.calls.userinfo).toBe(0);
    expect(await ask(`${sim.url}/v1/userinfo`)).toHaveProperty('status');
    expect(await ask(`${sim.url}/v1`)).toHaveProperty('status');
  });
});
