// Importing the package changes nothing of Express: the request accessors are installed when an app
// creates its login, explicitly (issue #42 item 4).
import express from 'express';
import request from 'supertest';

test('import leaves express.request alone; platformLogin() installs req.platformUser and the others', async () => {
  const pkg = await import('express-platform-login');
  const members = ['platformUser', 'hasPlatformLogin', 'platformToken', 'platformFetch'];
  expect(members.filter((name) => name in express.request)).toEqual([]);
  pkg.platformLogin({
    authUrl: 'http://127.0.0.1:9/',
    clientId: 'c',
    clientSecret: 's',
    redirectUri: 'http://127.0.0.1:3000/platform/callback',
    platformOrigins: ['http://127.0.0.1:9'],
    logger: {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
    },
  });
  expect(members.filter((name) => name in express.request)).toEqual(members);
  // A route the middleware does not cover gets the package's explanation, not `undefined`.
  const app = express();
  app.get('/uncovered', (req, res) => {
    try {
      res.json({ user: req.platformUser });
    } catch (error) {
      res.status(500).json({ message: (error as Error).message });
    }
  });
  const answer = await request(app).get('/uncovered');
  expect(answer.status).toBe(500);
  expect(answer.body.message).toMatch(/login\.middleware\(\)/);
});
