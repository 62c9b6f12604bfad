// `req.platformFetch()` against an open API that is down, hangs, stalls mid-body or lives on several
// bases: the app sees 502 `platform_error` / 504 `platform_timeout` (never undici's raw TypeError or
// a stack trace), the app's own fetch is the one used, and every call is counted.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import type { PlatformLoginOptions } from 'express-platform-login';
import { createTestApp } from '../helpers/test-app';
import { enter } from '../helpers/records';
import { freePort } from '../helpers/free-port';
import { createTestMeter, sample } from '../helpers/metrics';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';

let sim: PlatformSimulator;
/** A stand-in open API: `/hang` never answers, `/stall` sends headers and half a body, else it echoes. */
let api: Server;
let apiUrl: string;
const seen: Array<{ path: string; authorization: string | undefined }> = [];

beforeAll(async () => {
  sim = await startSimulator();
  api = createServer((req, res) => {
    seen.push({ path: req.url!, authorization: req.headers.authorization });
    if (req.url!.endsWith('/hang')) return; // never answers
    if (req.url!.endsWith('/stall')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"partial":');
      return; // the body never ends
    }
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ path: req.url }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(async () => {
  api.closeAllConnections();
  await new Promise((resolve) => api.close(resolve));
  await sim.close();
});
beforeEach(() => (seen.length = 0));

/** A logged-in agent of an app whose /api/open?path=… calls platformFetch(path). */
async function appWith(login: Partial<PlatformLoginOptions>) {
  const built = createTestApp({ sim, login });
  built.app.get('/api/open', async (req, res, next) => {
    try {
      const init = typeof req.query.api === 'string' ? { api: req.query.api } : {};
      const answer = await req.platformFetch(String(req.query.path), init);
      res.status(answer.status).json(await answer.json());
    } catch (error) {
      next(error);
    }
  });
  // Mounted again after the route: createTestApp's own error handler sits before it.
  built.app.use(built.login.errorHandler());
  const { agent } = await enter(built.app, sim);
  return { ...built, agent };
}

test('an open API nobody listens on: 502 platform_error in JSON, and a page without a stack for a browser', async () => {
  const closed = `http://127.0.0.1:${await freePort()}`;
  const { agent } = await appWith({ api: { url: closed } });
  const json = await agent.get('/api/open?path=/userinfo').set('Accept', 'application/json');
  expect(json.status).toBe(502);
  expect(json.body).toEqual({ error: 'platform_error' });
  const html = await agent.get('/api/open?path=/userinfo').set('Accept', 'text/html');
  expect(html.status).toBe(502);
  expect(html.text).not.toMatch(/TypeError|fetch failed|at .*\.js/);
});

test('an open API that never answers: 504 platform_timeout after apiTimeoutMs', async () => {
  const { agent } = await appWith({ api: { url: apiUrl, timeoutMs: 300 } });
  const startedAt = Date.now();
  const res = await agent.get('/api/open?path=/hang').set('Accept', 'application/json');
  expect(res.status).toBe(504);
  expect(res.body).toEqual({ error: 'platform_timeout' });
  expect(Date.now() - startedAt).toBeLessThan(2000 + LOAD_ALLOWANCE_MS);
});

test('an open API that stalls in the middle of its body: reading it fails with 504 platform_timeout too', async () => {
  const { agent } = await appWith({ api: { url: apiUrl, timeoutMs: 300 } });
  const res = await agent.get('/api/open?path=/stall').set('Accept', 'application/json');
  expect(res.status).toBe(504);
  expect(res.body).toEqual({ error: 'platform_timeout' });
});

test("the app's tokenClient.fetch carries the open-API calls too", async () => {
  const calls: string[] = [];
  const counting: typeof fetch = (input, init) => {
    calls.push(String(input));
    return fetch(input, init);
  };
  const { agent } = await appWith({ api: { url: apiUrl }, tokenClient: { fetch: counting } });
  const res = await agent.get('/api/open?path=/userinfo');
  expect(res.status).toBe(200);
  expect(calls).toContain(`${apiUrl}/userinfo`);
});

test('several open-API bases: a call picks one by name; the token goes to no other host', async () => {
  const { agent } = await appWith({
    api: { url: `${apiUrl}/social`, urls: { payments: `${apiUrl}/pay/v2` } },
  });
  const paid = await agent.get('/api/open?path=/orders&api=payments');
  expect(paid.status).toBe(200);
  expect(paid.body).toEqual({ path: '/pay/v2/orders' });
  expect(seen[0]!.authorization).toMatch(/^Bearer .+/);

  const unknown = await agent.get('/api/open?path=/orders&api=shop');
  expect(unknown.status).toBe(500);
  const elsewhere = await agent.get(
    `/api/open?path=${encodeURIComponent('http://127.0.0.2:1/steal')}`,
  );
  expect(elsewhere.status).toBe(500);
  expect(seen).toHaveLength(1);
});

test('a path that is no path under the open API: one TypeError naming the fix, nothing sent', async () => {
  const { app, agent } = await appWith({ api: { url: `${apiUrl}/social` } });
  app.get('/api/try', async (req, res) => {
    try {
      await req.platformFetch(String(req.query.path));
      res.json({ sent: true });
    } catch (error) {
      res.json({ name: (error as Error).name, message: (error as Error).message });
    }
  });
  for (const path of [
    'userinfo',
    '@127.0.0.2/x',
    '//127.0.0.2/x',
    '%2F%2Fx',
    'http://127.0.0.2:1/x',
  ]) {
    const tried = await agent.get(`/api/try?path=${encodeURIComponent(path)}`);
    expect(tried.body).toEqual({
      name: 'TypeError',
      message: expect.stringContaining('pass a path such as "/userinfo"'),
    });
  }
  expect(seen).toEqual([]);
});

test('metrics: each call counted by base and outcome', async () => {
  const meter = createTestMeter();
  try {
    const { agent } = await appWith({
      api: { url: apiUrl, timeoutMs: 1500 },
      meterProvider: meter.provider,
    });
    await agent.get('/api/open?path=/userinfo');
    await agent.get('/api/open?path=/hang');
    const text = await meter.scrape();
    expect(sample(text, 'epl_open_api_calls_total', { api: 'default', outcome: '2xx' })).toBe(1);
    expect(sample(text, 'epl_open_api_calls_total', { api: 'default', outcome: 'timeout' })).toBe(
      1,
    );
    expect(
      sample(text, 'epl_open_api_calls_total', { api: 'default', outcome: 'unreachable' }),
    ).toBe(0);
  } finally {
    await meter.shutdown();
  }
});
