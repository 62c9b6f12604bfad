// Importing the package, creating its parts (platformLogin(), the token and session stores on
// Redis, sockets, every middleware) and serving a whole login change nothing on an object the
// package shares with the app or other libraries: Express's request and response prototypes, Node's,
// `Error`, the built-ins' prototypes. The members a handler gets are set on each request instead, as
// express-session sets `req.session`. Runs on Express 5 (integration) and 4 (express4): the
// package is imported after the snapshot, so only this file's own imports precede it.
import http from 'node:http';
import { EventEmitter } from 'node:events';
import express from 'express';
import session from 'express-session';
import { Redis } from 'ioredis';
import request from 'supertest';
// zod, a dependency, registers its own globals when imported (`__zod_globalConfig`): its doing.
import 'zod';

/** Every object the package could reach that it does not own. */
const SHARED: Record<string, object> = {
  'express.request': express.request,
  'express.response': express.response,
  'express.application': express.application,
  'http.IncomingMessage.prototype': http.IncomingMessage.prototype,
  'http.ServerResponse.prototype': http.ServerResponse.prototype,
  'http.Server.prototype': http.Server.prototype,
  'EventEmitter.prototype': EventEmitter.prototype,
  'session.Store.prototype': session.Store.prototype,
  'session.MemoryStore.prototype': session.MemoryStore.prototype,
  'Redis.prototype': Redis.prototype,
  Error,
  'Error.prototype': Error.prototype,
  TypeError,
  Object,
  'Object.prototype': Object.prototype,
  'Function.prototype': Function.prototype,
  'Array.prototype': Array.prototype,
  'Promise.prototype': Promise.prototype,
  Promise,
  JSON,
  Symbol,
  globalThis,
  process,
};

/** Each object's own properties (symbols too), as descriptors. */
function snapshot(): Record<string, Record<string, PropertyDescriptor>> {
  const taken: Record<string, Record<string, PropertyDescriptor>> = {};
  for (const [name, target] of Object.entries(SHARED)) {
    const own: Record<string, PropertyDescriptor> = {};
    for (const key of Reflect.ownKeys(target)) {
      own[String(key)] = Object.getOwnPropertyDescriptor(target, key)!;
    }
    taken[name] = own;
  }
  return taken;
}

/** What changed between two snapshots: `object.key` added, removed or redefined. */
function changes(
  before: ReturnType<typeof snapshot>,
  after: ReturnType<typeof snapshot>,
): string[] {
  const changed: string[] = [];
  for (const name of Object.keys(SHARED)) {
    const keys = new Set([...Object.keys(before[name]!), ...Object.keys(after[name]!)]);
    for (const key of keys) {
      const was = before[name]![key];
      const is = after[name]![key];
      const same =
        was !== undefined &&
        is !== undefined &&
        (['value', 'get', 'set', 'writable', 'enumerable', 'configurable'] as const).every(
          (field) => Object.is(was[field], is[field]),
        );
      if (!same) changed.push(`${name}.${key}`);
    }
  }
  // Node's own bookkeeping on `process` (its uptime counters, the warnings it emits) is not ours.
  return changed.filter((entry) => !/^process\._/.test(entry));
}

// Globals that define themselves on first read (`URL`, `TextDecoder`): read once, before the snapshot.
// Not `localStorage`: reading it warns on Node.js 25+ (no --localstorage-file), and it stays a getter.
for (const key of Reflect.ownKeys(globalThis)) {
  if (key === 'localStorage') continue;
  try {
    void (globalThis as Record<PropertyKey, unknown>)[key];
  } catch {
    // A global that throws on read changes nothing by being read.
  }
}
const before = snapshot();

test('importing and creating the package and serving a login leave every shared object as it was', async () => {
  const pkg = await import('express-platform-login');
  const { startSimulator } = await import('express-platform-login/simulator');
  const { startRedisServer } = await import('../helpers/redis-server');
  const { loginOptions, SESSION_SECRET, TEST_REDIRECT_URI } = await import('../helpers/test-app');
  const afterImport = snapshot();

  const sim = await startSimulator();
  const server = await startRedisServer();
  const redis = new Redis(`redis://127.0.0.1:${server.port}`);
  try {
    const sessions = new pkg.RedisSessionStore({ redis });
    const store = new pkg.RedisTokenStore({ redis, allowPlaintextTokens: true });
    const login = pkg.platformLogin(loginOptions(sim, { store }));
    const sessionMiddleware = session({
      store: sessions,
      secret: SESSION_SECRET,
      resave: false,
      saveUninitialized: false,
    });
    const app = express();
    app.use(sessionMiddleware);
    app.use('/platform/callback', login.callback);
    app.get('/api/me', login.middleware(), login.requireScopes('user_info'), (req, res) => {
      res.json({ openId: req.platformUser!.openId });
    });
    app.get('/optional', login.middleware({ optional: true }), (req, res) => {
      res.json({ loggedIn: req.hasPlatformLogin });
    });
    app.post('/logout', login.logout());
    app.use(login.errorHandler());
    login.sockets({ session: sessionMiddleware });
    new pkg.MemoryTokenStore();
    const afterCreation = snapshot();

    // A whole login through it: the members are set on each request, not on a prototype.
    const agent = request.agent(app);
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-ada' });
    await agent.get(`/platform/callback?code=${code}`).expect(303);
    await agent.get('/api/me').expect(200, { openId: 'player-ada' });
    await request(app).get('/optional').expect(200, { loggedIn: false });
    expect({
      import: changes(before, afterImport),
      creation: changes(afterImport, afterCreation),
      requests: changes(afterCreation, snapshot()),
    }).toEqual({ import: [], creation: [], requests: [] });
    await Promise.all([sessions.close(), store.close()]);
  } finally {
    redis.disconnect();
    await server.stop();
    await sim.close();
  }
});
