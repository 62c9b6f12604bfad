/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS on purpose: run by node alone, as an outsider would */
/* global require, process, console */
// The outside check's floor, written apart from the bench on purpose: express + express-session +
// connect-redis 8.1 on ioredis from the same node_modules, nothing else. Toggles, to test one
// suspect at a time: F_LOOPDELAY=1 an event-loop-delay sampler at 1 ms; F_INSPECTOR=1 a connected
// inspector session; F_CMDTIMEOUT=1 ioredis commandTimeout 1000 + maxRetriesPerRequest 1;
// F_MAXAGE=1 a session cookie with maxAge (1 day).
// CLIENT=redis: node-redis with connect-redis 10 (ioredis with connect-redis 8.1 otherwise).
const express = require('express');
const session = require('express-session');
const T = (n) => process.env[n] === '1';
if (T('F_LOOPDELAY')) require('node:perf_hooks').monitorEventLoopDelay({ resolution: 1 }).enable();
if (T('F_INSPECTOR')) new (require('node:inspector/promises').Session)().connect();
function sessionStore() {
  if (process.env.CLIENT === 'redis') {
    const { RedisStore } = require('connect-redis');
    const client = require('redis').createClient({ url: process.env.REDIS_URL });
    client.connect();
    return new RedisStore({ client });
  }
  const { RedisStore } = require('connect-redis8');
  const { Redis } = require('ioredis');
  const options = T('F_CMDTIMEOUT') ? { commandTimeout: 1000, maxRetriesPerRequest: 1 } : {};
  return new RedisStore({ client: new Redis(process.env.REDIS_URL, options) });
}
const app = express();
app.use(
  session({
    store: sessionStore(),
    secret: 'floor-secret',
    resave: false,
    saveUninitialized: false,
    ...(T('F_MAXAGE') ? { cookie: { httpOnly: true, sameSite: 'lax', maxAge: 86400000 } } : {}),
  }),
);
app.get('/login', (req, res) => {
  req.session.user = { openId: 'player-1' };
  res.json({ ok: true });
});
app.get('/api/me', (req, res) => {
  if (!req.session.user) return res.status(401).json({ error: 'login_required' });
  res.json({ openId: req.session.user.openId, unionId: null, scope: ['user_info'] });
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () =>
  console.log('floor listening', process.env.PORT),
);
server.keepAliveTimeout = 120000;
