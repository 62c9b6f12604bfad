// Embedded mode in a real browser (headless Chromium): the platform's page on http://127.0.0.1
// frames the game on https://localhost (another site; TLS with a certificate made for the test,
// since express-session sends a Secure cookie over TLS only). Covers the cookie profile, the cookie
// check, frame-ancestors, CSRF with the partitioned cookie attached, and a forged entry.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import session from 'express-session';
import type { Browser, BrowserContext } from 'playwright-core';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import {
  platformLogin,
  type PlatformLogin,
  type PlatformLoginEvents,
} from 'express-platform-login';
import { DEMO_CLIENT_ID, DEMO_CLIENT_SECRET } from 'express-platform-login/simulator';
import { embeddedSessionCookie } from '../../lib/entry/embedded-cookie';
import { launchChromium } from '../helpers/browser';
import { QUIET, SESSION_SECRET } from '../helpers/test-app';

interface Game {
  url: string;
  login: PlatformLogin;
  scores: number[];
  /** Every POST to /api as the server saw it: did it carry the session, from which site? */
  posts: { loggedIn: boolean; site: string | undefined }[];
  violations: PlatformLoginEvents['entryContextViolation'][0][];
  server: Server;
}

interface Page {
  url: string;
  server: Server;
}

let sim: PlatformSimulator;
let browser: Browser;
let tls: { key: Buffer; cert: Buffer };
const servers: Server[] = [];

/** A self-signed certificate for `localhost`, made with openssl for this run only. */
function makeCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'epl-tls-'));
  try {
    const made = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    if (made.status !== 0) {
      throw new Error('openssl could not make a test certificate: sudo apt-get install openssl');
    }
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function listen(server: Server): Promise<number> {
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

/** A page server on http://127.0.0.1 answering `html(path, query)`. */
async function startPage(html: (path: string, query: URLSearchParams) => string): Promise<Page> {
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(html(url.pathname, url.searchParams));
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, server };
}

/** The game on https://localhost, in embedded mode; `cookie: 'default'` forgets the embedded profile. */
async function startGame(platformOrigin: string, cookie: 'embedded' | 'default'): Promise<Game> {
  // The port is needed for the redirect_uri, before the app exists.
  const server = createHttpsServer(tls);
  const port = await listen(server);
  const url = `https://localhost:${port}`;
  const login = platformLogin({
    authUrl: sim.url,
    clientId: DEMO_CLIENT_ID,
    clientSecret: DEMO_CLIENT_SECRET,
    redirectUri: `${url}/platform/callback`,
    platformOrigins: [platformOrigin],
    embedded: true,
    entry: { context: { mode: 'enforce' } },
    logger: QUIET,
  });
  const game: Game = { url, login, scores: [], posts: [], violations: [], server };
  login.on('entryContextViolation', (event) => game.violations.push(event));
  const profile = embeddedSessionCookie();
  const app = express();
  app.use(login.frameAncestors());
  app.use(
    session({
      ...(cookie === 'embedded' ? profile : {}),
      secret: SESSION_SECRET,
      resave: false,
      saveUninitialized: false,
    }),
  );
  app.use('/platform/callback', login.callback);
  app.get('/', login.middleware({ optional: true }), (req, res) => {
    res.send(
      req.platformUser
        ? `<p id="player">${req.platformUser.openId}</p>`
        : '<p id="enter">Enter from the platform</p>',
    );
  });
  app.use('/api', (req, _res, next) => {
    if (req.method === 'POST') {
      const site = req.headers['sec-fetch-site'];
      game.posts.push({ loggedIn: req.session.platformLogin !== undefined, site: String(site) });
    }
    next();
  });
  app.use('/api', login.csrfProtection(), login.middleware());
  app.post('/api/score', (_req, res) => {
    game.scores.push(game.scores.length + 1);
    res.json({ scores: game.scores.length });
  });
  server.on('request', app);
  return game;
}

let platform: Page;
let attacker: Page;
let game: Game;
let cookieless: Game;

beforeAll(async () => {
  // The game's certificate is made for this run only, so the browser is told to accept it.
  browser = await launchChromium(['--ignore-certificate-errors']);
  tls = makeCertificate();
  sim = await startSimulator();
  // The platform's page frames the game at its redirect_uri with a fresh code, as platforms do.
  platform = await startPage((path, query) => {
    const target = path === '/cookieless' ? cookieless : game;
    const code = sim.issueCode({
      redirectUri: `${target.url}/platform/callback`,
      openId: query.get('openId') ?? 'player-ada',
    });
    return `<h1>Platform</h1><iframe src="${target.url}/platform/callback?code=${code}"></iframe>`;
  });
  game = await startGame(platform.url, 'embedded');
  cookieless = await startGame(platform.url, 'default');
  attacker = await startPage((path, query) => {
    if (path === '/frame') return `<iframe src="${game.url}/"></iframe>`;
    if (path === '/forged-entry') {
      return `<iframe src="${game.url}/platform/callback?code=${query.get('code') ?? ''}"></iframe>`;
    }
    // A cross-site POST that would carry the player's cookie (no-cors: the answer stays opaque).
    return `<script>fetch(${JSON.stringify(`${game.url}/api/score`)}, { method: 'POST', mode: 'no-cors', credentials: 'include' }).finally(() => { document.title = 'sent'; });</script>`;
  });
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
  await sim?.close();
});

beforeEach(() => {
  sim.resetCalls();
  for (const g of [game, cookieless]) {
    g.posts.length = 0;
    g.violations.length = 0;
  }
});

async function withContext(run: (context: BrowserContext) => Promise<void>): Promise<void> {
  const context = await browser.newContext();
  context.setDefaultTimeout(10_000);
  try {
    await run(context);
  } finally {
    await context.close();
  }
}

test('the platform frames the game: one exchange, a partitioned __Host- cookie, the player in the frame', async () => {
  await withContext(async (context) => {
    const page = await context.newPage();
    await page.goto(`${platform.url}/?openId=player-bo`);
    const frame = page.frameLocator('iframe');
    await expect(frame.locator('#player').textContent()).resolves.toBe('player-bo');
    expect(sim.calls.authorization_code).toBe(1);
    expect(game.violations).toEqual([]);

    const cookies = await context.cookies(game.url);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({
      name: '__Host-sid',
      path: '/',
      httpOnly: true,
      secure: true,
      sameSite: 'None',
      partitionKey: 'http://127.0.0.1',
    });

    // The game page's own POST (same-origin) passes the CSRF check.
    const scoresBefore = game.scores.length;
    const status = await page
      .frames()[1]!
      .evaluate(() => fetch('/api/score', { method: 'POST' }).then((r) => r.status));
    expect(status).toBe(200);
    expect(game.scores.length).toBe(scoresBefore + 1);
    expect(game.posts).toEqual([{ loggedIn: true, site: 'same-origin' }]);
  });
});

test("another site's page carries the partitioned cookie on a cross-site POST, and it is refused", async () => {
  await withContext(async (context) => {
    const page = await context.newPage();
    await page.goto(`${platform.url}/?openId=player-ada`);
    await page.frameLocator('iframe').locator('#player').waitFor();
    const scoresBefore = game.scores.length;

    await page.goto(`${attacker.url}/csrf`);
    await page.waitForFunction(() => document.title === 'sent');
    // SameSite=None let the cookie through (so SameSite is no defence here)…
    expect(game.posts).toEqual([{ loggedIn: true, site: 'cross-site' }]);
    // …and the CSRF check refused the request.
    expect(game.scores.length).toBe(scoresBefore);
  });
});

test('a page of another site cannot frame the game (frame-ancestors)', async () => {
  await withContext(async (context) => {
    const page = await context.newPage();
    const answers: number[] = [];
    page.on('response', (response) => {
      if (response.url() === `${game.url}/`) answers.push(response.status());
    });
    await page.goto(`${attacker.url}/frame`);
    expect(answers).toEqual([200]); // the game answered…
    const frame = page.frames()[1]!;
    expect(frame.url()).not.toBe(`${game.url}/`); // …and the browser refused to show it
    await expect(page.frameLocator('iframe').locator('#enter').count()).resolves.toBe(0);
  });
});

test("a forged entry (the attacker's own code in a hidden frame) is refused before its code is sent", async () => {
  await withContext(async (context) => {
    const page = await context.newPage();
    const code = sim.issueCode({
      redirectUri: `${game.url}/platform/callback`,
      openId: 'player-cy',
    });
    const answers: number[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(`${game.url}/platform/callback`))
        answers.push(response.status());
    });
    await page.goto(`${attacker.url}/forged-entry?code=${code}`);
    expect(answers).toEqual([403]);
    expect(sim.calls.authorization_code).toBe(0);
    expect(game.violations).toEqual([
      expect.objectContaining({ reason: 'foreign-referer', refererOrigin: attacker.url }),
    ]);
    expect(await context.cookies(game.url)).toEqual([]);
  });
});

test('a browser that refuses the cookie sees the diagnostic page once, and no code is burnt again', async () => {
  await withContext(async (context) => {
    const page = await context.newPage();
    const callbacks: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${cookieless.url}/platform/callback`)) {
        callbacks.push(new URL(request.url()).search.replace(/code=[^&]+/, 'code=…'));
      }
    });
    await page.goto(`${platform.url}/cookieless`);
    const frame = page.frameLocator('iframe');
    await expect(frame.locator('p').textContent()).resolves.toContain(
      "did not keep the game's login cookie",
    );
    // The cookie without SameSite=None was dropped inside the cross-site frame.
    expect(await context.cookies(cookieless.url)).toEqual([]);
    expect(callbacks).toEqual(['?code=…', '?cookie_check=1']);
    expect(sim.calls.authorization_code).toBe(1);
  });
});
