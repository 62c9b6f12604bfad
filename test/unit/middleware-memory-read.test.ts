// login.middleware() on a store that holds records in memory (`records.cachedRead`): a request
// whose record memory holds goes on within the middleware call itself, without the store's `get`;
// one whose record memory does not hold is read with `get` and goes on once that read answers.
// express + express-session's MemoryStore over real HTTP (supertest); no Redis.
import { engineOf } from '../../lib/core/derived-engine';
import express, { type RequestHandler } from 'express';
import session from 'express-session';
import request from 'supertest';
import { MemoryTokenStore, platformLogin } from 'express-platform-login';
import { sampleRecord } from 'express-platform-login/testing';
import type { RecordRead } from '../../lib/core/store-engine';
import { hashSessionId } from '../../lib/core/hash';

function setup() {
  const store = new MemoryTokenStore();
  /** What memory holds, by session key (the stand-in for a record cache). */
  const held = new Map<string, RecordRead>();
  const gets: string[] = [];
  const get = engineOf(store).records.get.bind(engineOf(store).records);
  engineOf(store).records.get = (sessionKey) => {
    gets.push(sessionKey);
    return get(sessionKey);
  };
  engineOf(store).records.cachedRead = (sessionKey) => held.get(sessionKey);
  const login = platformLogin({
    authUrl: 'https://auth.platform.example',
    clientId: 'demo-game',
    clientSecret: 'demo-secret',
    redirectUri: 'https://game.example/platform/callback',
    // Entries checked, as in production: no warning about unchecked ones on the test's output.
    platformOrigins: ['https://platform.example'],
    store,
  });
  const middleware = login.middleware();
  /**
   * Per request through the middleware: whether it had settled the request when its call returned
   * (called next(), or answered the refusal itself).
   */
  const settledAtOnce: boolean[] = [];
  const watched: RequestHandler = (req, res, next) => {
    let called = false;
    middleware(req, res, (error?: unknown) => {
      called = true;
      next(error);
    });
    settledAtOnce.push(called || res.writableEnded);
  };
  const record = sampleRecord(1);
  const app = express();
  app.use(session({ secret: 'test-secret', resave: false, saveUninitialized: false }));
  // Logs the browser in as the entry would: the record in the store, the marker in the session.
  app.post('/login', async (req, res) => {
    const sessionKey = hashSessionId(req.sessionID);
    await engineOf(store).records.put(sessionKey, record, { expectedVersion: null, ttlMs: 60_000 });
    req.session.platformLogin = {
      openId: record.openId,
      entry: 'entry-hash',
      // Far from its renewal point: a request only reads.
      recordExpiresAt: Date.now() + 30 * 86_400_000,
    };
    res.json({ sessionKey });
  });
  app.get('/api/me', watched, (req, res) => {
    res.json({ openId: req.platformUser!.openId });
  });
  app.use(login.errorHandler());
  return { app, held, gets, settledAtOnce, record };
}

async function loggedIn(app: express.Express) {
  const agent = request.agent(app);
  const sessionKey = (await agent.post('/login').expect(200)).body.sessionKey as string;
  return { agent, sessionKey };
}

test('a record memory holds serves at once: next() within the call, no get', async () => {
  const { app, held, gets, settledAtOnce, record } = setup();
  const { agent, sessionKey } = await loggedIn(app);
  held.set(sessionKey, { status: 'found', record });

  const answer = await agent.get('/api/me');

  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ openId: record.openId });
  expect(settledAtOnce).toEqual([true]);
  expect(gets).toEqual([]);
});

test('an absence memory holds ends the login at once, without a get', async () => {
  const { app, held, gets, settledAtOnce } = setup();
  const { agent, sessionKey } = await loggedIn(app);
  held.set(sessionKey, { status: 'absent' });

  const answer = await agent.get('/api/me');

  expect(answer.status).toBe(401);
  expect(answer.body.error).toBe('login_required');
  expect(settledAtOnce).toEqual([true]);
  expect(gets).toEqual([]);
});

test('a record memory does not hold is read with get, and the request goes on after it', async () => {
  const { app, gets, settledAtOnce, record } = setup();
  const { agent, sessionKey } = await loggedIn(app);

  const answer = await agent.get('/api/me');

  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ openId: record.openId });
  expect(settledAtOnce).toEqual([false]);
  expect(gets).toEqual([sessionKey]);
});
