// What a route handler sees on `req` (docs/handlers.md): `platformUser` (undefined for a visitor on
// an optional route), `hasPlatformLogin`, `platformToken()` and `platformFetch()` (which reject
// without a login), set on each request by the middleware as `req.session` is by express-session;
// off the middleware none is set. Against the real simulator, on Express 5 (and an app on Express 4
// below; the express4 project runs a whole login on Express 4).
import { inspect } from 'node:util';
import express, { type Express, type Request } from 'express';
import session from 'express-session';
import request from 'supertest';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import {
  MemoryTokenStore,
  platformLogin,
  type PlatformLogin,
  type TokenStore,
} from 'express-platform-login';
import type { RecordRead } from '../../lib/core/store-engine';
import { engineOf } from '../../lib/core/derived-engine';
import { enter } from '../helpers/records';
import { entryApp, loginOptions, SESSION_SECRET } from '../helpers/test-app';
import { useSimulator } from '../helpers/bed';

let sim: PlatformSimulator;
useSimulator((started) => (sim = started));

/** What a handler reports about its request. */
const describeRequest = async (req: Request) => {
  const player = req.platformUser;
  if (player === undefined) return { loggedIn: req.hasPlatformLogin, player: typeof player };
  const token = await req.platformToken();
  const profile = (await (await req.platformFetch('/userinfo')).json()) as { open_id: string };
  return {
    loggedIn: req.hasPlatformLogin,
    openId: player.openId,
    sameUserObject: req.platformUser === player,
    tokenLength: token.length,
    profileOpenId: profile.open_id,
  };
};

/** An app with the handler on a required route, an optional route and a route without the middleware. */
function buildApp(login: PlatformLogin, makeApp: () => Express = () => express()): Express {
  const app = makeApp();
  app.use(session({ secret: SESSION_SECRET, resave: false, saveUninitialized: false }));
  app.use('/platform/callback', login.callback);
  const answer: express.RequestHandler = async (req, res, next) => {
    try {
      res.json(await describeRequest(req));
    } catch (error) {
      next(error);
    }
  };
  app.get('/required', login.middleware(), answer);
  app.get('/optional', login.middleware({ optional: true }), answer);
  // Handlers that use a member without checking for a player, or without the middleware at all.
  const member: express.RequestHandler = async (req, res, next) => {
    try {
      if (req.query.use === 'user') res.json({ player: typeof req.platformUser });
      else if (req.query.use === 'token') res.json({ length: (await req.platformToken()).length });
      else if (req.query.use === 'fetch')
        res.json({ status: (await req.platformFetch('/userinfo')).status });
      else res.json({ loggedIn: req.hasPlatformLogin });
    } catch (error) {
      next(error);
    }
  };
  app.get('/optional/member', login.middleware({ optional: true }), member);
  app.get('/unprotected/member', member);
  app.get('/unprotected/scopes', login.requireScopes('user_info'), (_req, res) => {
    res.json({ passed: true });
  });
  app.get('/detached', login.middleware(), async (req, res, next) => {
    const { platformToken } = req;
    try {
      res.json({ length: (await platformToken()).length });
    } catch (error) {
      next(error);
    }
  });
  // A handler (or a logger) that prints the whole request.
  app.get('/inspect', login.middleware(), async (req, res) => {
    const token = await req.platformToken();
    res.json({ printed: inspect(req, { depth: 6 }).includes(token), length: token.length });
  });
  app.use(login.errorHandler());
  app.use(((err, _req, res, _next) => {
    res.status(500).json({ error: 'unexpected', name: (err as Error).name });
  }) as express.ErrorRequestHandler);
  return app;
}

const setUp = (store: TokenStore = new MemoryTokenStore()) => {
  const login = platformLogin(loginOptions(sim, { store }));
  return { login, app: buildApp(login) };
};

describe('behind login.middleware()', () => {
  test('the player, a token and the open API, with no member missing', async () => {
    const { app } = setUp();
    const { agent } = await enter(app, sim, 'player-ada');
    const res = await agent.get('/required').expect(200);
    expect(res.body).toEqual({
      loggedIn: true,
      openId: 'player-ada',
      sameUserObject: true,
      tokenLength: expect.any(Number),
      profileOpenId: 'player-ada',
    });
    expect(sim.calls.userinfo).toBe(1);
  });

  test('printing the request (a logger) shows no token', async () => {
    const { app } = setUp();
    const { agent } = await enter(app, sim);
    const res = await agent.get('/inspect').expect(200);
    expect(res.body).toEqual({ printed: false, length: expect.any(Number) });
    expect(res.body.length).toBeGreaterThan(10);
  });

  test('concurrent requests of two players each see their own player', async () => {
    const { app } = setUp();
    const ada = await enter(app, sim, 'player-ada');
    const bo = await enter(app, sim, 'player-bo');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? ada : bo).agent.get('/required')),
    );
    expect(answers.map((res) => res.body.profileOpenId)).toEqual(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? 'player-ada' : 'player-bo')),
    );
    expect(answers.map((res) => res.body.openId)).toEqual(
      answers.map((res) => res.body.profileOpenId),
    );
  });

  test('a method called detached from its request is a 500 naming the mistake, not a crash', async () => {
    const { app } = setUp();
    const { agent } = await enter(app, sim);
    const res = await agent.get('/detached').set('Accept', 'application/json');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'unexpected', name: 'TypeError' });
  });
});

describe('optional routes', () => {
  test('a visitor: platformUser is undefined, hasPlatformLogin false, nothing is called at the platform', async () => {
    const { app } = setUp();
    const res = await request(app).get('/optional').expect(200);
    expect(res.body).toEqual({ loggedIn: false, player: 'undefined' });
    expect(sim.calls.userinfo).toBe(0);
  });

  test("a visitor's handler that reads platformUser without checking gets undefined, not an error", async () => {
    const { app } = setUp();
    const res = await request(app)
      .get('/optional/member?use=user')
      .set('Accept', 'application/json')
      .expect(200);
    expect(res.body).toEqual({ player: 'undefined' });
  });

  test('a logged-in player: the same members as on a required route', async () => {
    const { app } = setUp();
    const { agent } = await enter(app, sim, 'player-bo');
    const res = await agent.get('/optional').expect(200);
    expect(res.body).toMatchObject({
      loggedIn: true,
      openId: 'player-bo',
      profileOpenId: 'player-bo',
    });
  });

  test.each(['token', 'fetch'])(
    'a visitor whose handler uses %s anyway gets 401 login_required, and the platform is not called',
    async (use) => {
      const { app } = setUp();
      const res = await request(app)
        .get(`/optional/member?use=${use}`)
        .set('Accept', 'application/json');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'login_required' });
      expect(sim.calls.userinfo).toBe(0);
    },
  );
});

describe('a route login.middleware() does not cover', () => {
  test.each([
    ['user', { player: 'undefined' }],
    ['loggedIn', {}],
  ])('%s is not set there, as req.session is not without express-session', async (use, body) => {
    const { app } = setUp();
    const { agent } = await enter(app, sim);
    const res = await agent.get(`/unprotected/member?use=${use}`).expect(200);
    expect(res.body).toEqual(body);
  });

  test.each(['token', 'fetch'])(
    'calling %s there is a 500 (not a function), and the platform is not called',
    async (use) => {
      const { app } = setUp();
      const { agent } = await enter(app, sim);
      const res = await agent
        .get(`/unprotected/member?use=${use}`)
        .set('Accept', 'application/json');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'unexpected', name: 'TypeError' });
      expect(sim.calls.userinfo).toBe(0);
    },
  );

  test('login.requireScopes() without the middleware in front is a 500 server_misconfigured', async () => {
    const { app } = setUp();
    const { agent } = await enter(app, sim);
    const res = await agent.get('/unprotected/scopes').set('Accept', 'application/json');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'server_misconfigured' });
  });
});

describe('where the members come from', () => {
  test('an app on another copy of Express (its own request prototype) gets them too', async () => {
    // The package defines them on the Express it imports; another copy's requests get them on
    // their first pass through the middleware.
    /* eslint-disable @typescript-eslint/no-require-imports -- 'express4' has no types of its own */
    const copies = [
      require('express4'),
      require('../../node_modules/express'),
    ] as (typeof express)[];
    /* eslint-enable @typescript-eslint/no-require-imports */
    const other = copies.find((candidate) => candidate.request !== express.request)!;
    expect(other).toBeDefined();
    const login = platformLogin(loginOptions(sim, { store: new MemoryTokenStore() }));
    const app = buildApp(login, () => other() as unknown as Express);
    const { agent } = await enter(app, sim, 'player-ada');
    const res = await agent.get('/required').expect(200);
    expect(res.body).toMatchObject({
      loggedIn: true,
      openId: 'player-ada',
      profileOpenId: 'player-ada',
    });
    const visitor = await request(app).get('/optional').expect(200);
    expect(visitor.body).toEqual({ loggedIn: false, player: 'undefined' });
  });

  test("a store's in-memory record serves the request without a backend read, and is not changed by a handler", async () => {
    /** A store whose records answer from memory after the first read, as a client-side cache would. */
    const store = new MemoryTokenStore();
    const records = engineOf(store).records;
    const backend = records.get.bind(records);
    const cached = new Map<string, RecordRead>();
    let reads = 0;
    records.get = async (sessionKey) => {
      const hit = cached.get(sessionKey);
      if (hit !== undefined) return hit;
      reads += 1;
      const read = await backend(sessionKey);
      if (read.status === 'found') {
        Object.freeze(read.record.scope);
        cached.set(
          sessionKey,
          Object.freeze({ status: 'found', record: Object.freeze(read.record) }),
        );
      }
      return read;
    };
    const login = platformLogin(loginOptions(sim, { store }));
    const app = entryApp(login);
    // A handler that changes the player it was given must not change the next request's player.
    app.get('/api/me', login.middleware(), (req, res) => {
      const player = req.platformUser!;
      const scope = [...player.scope];
      player.scope.push('tampered');
      res.json({ openId: player.openId, scope });
    });
    const { agent } = await enter(app, sim, 'player-ada');
    const first = await agent.get('/api/me').expect(200);
    const readsAfterFirst = reads;
    const second = await agent.get('/api/me').expect(200);
    expect(second.body).toEqual(first.body);
    expect(second.body.scope).not.toContain('tampered');
    expect(reads).toBe(readsAfterFirst);
  });
});

describe('where the members are kept (on the request itself)', () => {
  /**
   * Two players' requests held after the middleware until both have passed it, so each handler
   * reads its members after another request was handled.
   */
  function heldApp(login: PlatformLogin, change: (res: express.Response) => void): Express {
    const app = entryApp(login);
    let passed = 0;
    let release!: () => void;
    const bothPassed = new Promise<void>((resolve) => (release = resolve));
    app.get(
      '/held',
      login.middleware(),
      (_req, res, next) => {
        change(res);
        passed += 1;
        if (passed === 2) release();
        next();
      },
      async (req, res, next) => {
        try {
          await bothPassed;
          const token = await req.platformToken();
          res.json({
            openId: req.platformUser!.openId,
            theme: res.locals.theme ?? null,
            length: token.length,
          });
        } catch (error) {
          next(error);
        }
      },
    );
    app.use(login.errorHandler());
    return app;
  }

  test('a handler that replaces res.locals with an empty object keeps each player', async () => {
    const login = platformLogin(loginOptions(sim, { store: new MemoryTokenStore() }));
    const app = heldApp(login, (res) => {
      res.locals = {};
    });
    const ada = await enter(app, sim, 'player-ada');
    const bo = await enter(app, sim, 'player-bo');
    const [forAda, forBo] = await Promise.all([ada.agent.get('/held'), bo.agent.get('/held')]);
    expect([forAda.status, forBo.status]).toEqual([200, 200]);
    expect(forAda.body).toMatchObject({ openId: 'player-ada', theme: null });
    expect(forBo.body).toMatchObject({ openId: 'player-bo', theme: null });
  });

  test("the four members are the request's own properties; its prototype gets none", async () => {
    const login = platformLogin(loginOptions(sim, { store: new MemoryTokenStore() }));
    const app = entryApp(login);
    const members = ['platformUser', 'hasPlatformLogin', 'platformToken', 'platformFetch'];
    app.get('/own', login.middleware(), (req, res) => {
      const inherited = members.filter((name) => name in Object.getPrototypeOf(req));
      res.json({ own: members.filter((name) => Object.hasOwn(req, name)), inherited });
    });
    const { agent } = await enter(app, sim, 'player-ada');
    const res = await agent.get('/own').expect(200);
    expect(res.body).toEqual({ own: members, inherited: [] });
  });
});
