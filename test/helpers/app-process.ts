// A game backend process for multi-process tests: express-session on connect-redis and the package
// on RedisTokenStore, both on the shared Redis. Started with `node -r esbuild-register`; prints
// "listening <port>" when ready. Configured by environment: REDIS_URL, SIM_URL, KEY_PREFIX.
import express from 'express';
import session from 'express-session';
import { RedisStore } from 'connect-redis';
import { Redis } from 'ioredis';
import { platformLogin, RedisTokenStore } from '../../lib';

const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
const prefix = process.env.KEY_PREFIX ?? 'mp:';
const login = platformLogin({
  authUrl: process.env.SIM_URL!,
  clientId: 'demo-game',
  clientSecret: 'demo-secret',
  redirectUri: 'http://127.0.0.1:3999/platform/callback',
  store: new RedisTokenStore({ redis, prefix: `${prefix}t:` }),
});
let refreshes = 0;
let reauths = 0;
login.on('refresh', () => (refreshes += 1));
login.on('refreshFailed', (event) => {
  if (event.code === 'ERR_PLATFORM_INVALID_GRANT' || event.code === 'ERR_PLATFORM_REAUTH_REQUIRED')
    reauths += 1;
});

const app = express();
app.use(
  session({
    store: new RedisStore({ client: redis, prefix: `${prefix}s:` }),
    secret: 'a-shared-session-secret-for-all-processes',
    resave: false,
    saveUninitialized: false,
  }),
);
app.use('/platform/callback', login.callback);
app.use('/api', login.middleware());
app.get('/api/token', async (req, res, next) => {
  try {
    res.json({ accessToken: await req.platformToken!(), pid: process.pid });
  } catch (error) {
    next(error);
  }
});
app.get('/stats', (_req, res) => {
  res.json({ refreshes, reauths });
});
app.use(login.errorHandler());

const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  redis.disconnect();
});
