/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS on purpose: run by node alone, as an outsider would write it */
/* global require, process, console */
// The floor every request-cost figure is measured against, in the bench and in the outside check
// alike: express + express-session + connect-redis as their READMEs show, nothing else, plain
// JavaScript. CLIENT=redis: node-redis with connect-redis 10; otherwise ioredis with connect-redis
// 8.1. F_MEMORY=1: express-session's MemoryStore (the bound). REDIS_CLUSTER_NODES=host:port,…: a
// Redis Cluster on the same library. Prints "floor listening <port>" (PORT=0 or unset: a free one).
const express = require('express');
const session = require('express-session');
/** REDIS_CLUSTER_NODES as `{ host, port }` seeds, or undefined when it is unset or empty. */
function clusterNodes() {
  const list = (process.env.REDIS_CLUSTER_NODES ?? '').split(',').filter((node) => node !== '');
  if (list.length === 0) return undefined;
  return list.map((node) => {
    const at = node.lastIndexOf(':');
    return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
  });
}
/** A node-redis client's connect(): the floor listens once it is done (a Cluster has found its slots). */
let connecting = Promise.resolve();
function sessionStore() {
  if (process.env.F_MEMORY === '1') return new session.MemoryStore();
  const nodes = clusterNodes();
  if (process.env.CLIENT === 'redis') {
    const { RedisStore } = require('connect-redis');
    const redis = require('redis');
    const client =
      nodes === undefined
        ? redis.createClient({ url: process.env.REDIS_URL })
        : redis.createCluster({ rootNodes: nodes.map((socket) => ({ socket })) });
    connecting = client.connect();
    return new RedisStore({ client });
  }
  const { RedisStore } = require('connect-redis8');
  const { Redis, Cluster } = require('ioredis');
  const client = nodes === undefined ? new Redis(process.env.REDIS_URL) : new Cluster(nodes);
  return new RedisStore({ client });
}
const app = express();
app.use(
  session({
    store: sessionStore(),
    secret: 'floor-secret',
    resave: false,
    saveUninitialized: false,
  }),
);
app.get('/login', (req, res) => {
  req.session.user = { openId: 'player-1' };
  res.status(204).end();
});
app.get('/api/me', (req, res) => {
  if (!req.session.user) return res.status(401).json({ error: 'login_required' });
  res.json({ openId: req.session.user.openId, unionId: null, scope: ['user_info'] });
});
connecting.then(() => {
  const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () =>
    console.log('floor listening', server.address().port),
  );
  // The load generator keeps its connections open between windows.
  server.keepAliveTimeout = 120000;
});
