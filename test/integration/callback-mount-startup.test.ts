// checkSetup({ app }) names a callback mounted away from redirectUri's path at start-up, before any
// player meets Express's 404. It reads the app's router as Express 5 gives it (`app.router`), so this
// file runs on Express 5 only; on Express 4 the per-request check names it (mistakes-logged.test.ts).
import express from 'express';
import session from 'express-session';
import request from 'supertest';
import { checkSetup, platformLogin } from 'express-platform-login';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import { loginOptions, SESSION_SECRET, TEST_REDIRECT_URI } from '../helpers/test-app';
import { useSimulator } from '../helpers/bed';
import { recordingLogger } from '../helpers/recording-logger';

let sim: PlatformSimulator;
useSimulator((started) => (sim = started));

const code = (redirectUri = TEST_REDIRECT_URI): string => sim.issueCode({ redirectUri });

describe('a callback mounted away from redirectUri, named at start-up by checkSetup({ app })', () => {
  /** The README's order: checkSetup() before the callback is mounted, the middleware under /api. */
  async function startedWith(mount: (app: express.Express, callback: express.Router) => void) {
    const { logger, seen } = recordingLogger();
    const login = platformLogin({ ...loginOptions(sim), logger });
    const app = express();
    const sessionOptions = { secret: SESSION_SECRET, resave: false, saveUninitialized: false };
    app.use(session(sessionOptions));
    await checkSetup({ app, session: sessionOptions, warn: () => undefined });
    mount(app, login.callback);
    app.use('/api', login.middleware());
    app.get('/api/me', (req, res) => void res.json(req.platformUser));
    // What follows `await checkSetup()` in the README runs before the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    return { app, seen };
  }

  test('mounted at /wrong: one warning at start naming both paths; the 404 after it adds none', async () => {
    const { app, seen } = await startedWith((app, callback) => app.use('/wrong', callback));
    expect(seen()).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(
          /login\.callback is mounted at \/wrong, but redirectUri's path is \/platform\/callback/,
        ),
      }),
    ]);
    await request(app).get('/platform/callback?code=x').expect(404);
    await request(app).get('/wrong').expect(400);
    expect(seen()).toHaveLength(1);
  });

  test('routed with app.get at its very path: one warning at start saying to mount it with app.use', async () => {
    const { app, seen } = await startedWith((app, callback) =>
      app.get('/platform/callback', callback),
    );
    const routed =
      "login.callback is routed with app.get('/platform/callback', …) (or another route method): a router routed that way never reaches its entry, " +
      "so every entry answers 404. Mount it with app.use('/platform/callback', login.callback).";
    expect(seen().map((line) => line.message)).toEqual([routed]);
    // What the warning says: the entry is Express's 404, and no second warning follows.
    await request(app).get(`/platform/callback?code=${code()}`).expect(404);
    expect(seen()).toHaveLength(1);
    expect(sim.calls.authorization_code).toBe(0);
  });

  test('mounted inside a router of the game: the whole path is named', async () => {
    const { seen } = await startedWith((app, callback) => {
      const game = express.Router();
      game.use('/platform/callback', callback);
      app.use('/game', game);
    });
    expect(seen().map((line) => line.message)).toEqual([
      expect.stringContaining('login.callback is mounted at /game/platform/callback,'),
    ]);
  });

  test('several registrations: the one mounted away is named with its own path; login.callbacks as a whole, nothing', async () => {
    const registrations = [
      {
        name: 'mini',
        clientId: 'mini-game',
        clientSecret: 'mini-secret',
        redirectUri: 'http://127.0.0.1:3999/platform/mini/callback',
      },
    ];
    const mount = async (
      use: (app: express.Express, login: ReturnType<typeof platformLogin>) => void,
    ) => {
      const { logger, seen } = recordingLogger();
      const login = platformLogin({ ...loginOptions(sim), registrations, logger });
      const app = express();
      await checkSetup({ app, warn: () => undefined });
      use(app, login);
      await new Promise((resolve) => setImmediate(resolve));
      return seen().map((line) => line.message);
    };
    expect(
      await mount((app, login) => {
        app.use('/platform/callback', login.callback);
        app.use('/mini/callback', login.callbackFor('mini'));
      }),
    ).toEqual([
      expect.stringContaining(
        "login.callback is mounted at /mini/callback, but redirectUri's path is /platform/mini/callback",
      ),
    ]);
    expect(await mount((app, login) => app.use(login.callbacks))).toEqual([]);
  });

  test('mounted at its path, nothing is said, and the entry works', async () => {
    const { app, seen } = await startedWith((app, callback) =>
      app.use('/platform/callback', callback),
    );
    await request(app).get(`/platform/callback?code=${code()}`).expect(303);
    expect(seen()).toEqual([]);
  });
});
