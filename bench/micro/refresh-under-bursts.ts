// Issue 52.1's figure: refreshes under request bursts on a single Redis with no replica. Six logins
// with 1-second tokens ask for their token every 200 ms for DURATION_S seconds, while another
// process sends bursts of 1,500 `GET /ping` (no cookie) every 2 s; per client: the players'
// requests, how many were not 200, their slowest, and the platform's refreshes. A burst stalls the
// event loop past the record cache's lease; before docs/durability.md's signs, that held every
// refresh back for 3 s.
// Run: node -r esbuild-register bench/micro/refresh-under-bursts.ts (DURATION_S=n)
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { platformLogin, RedisSessionStore, RedisTokenStore } from '../../lib/index';
import { DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, startSimulator } from '../../lib/simulator/index';

const DURATION_MS = Number(process.env.DURATION_S ?? 30) * 1000;
const REDIRECT_URI = 'http://127.0.0.1:3999/platform/callback';
const QUIET = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** A child process that sends 1,500 requests to `url` every 2 s until killed. */
function bursts(url: string) {
  const source = `setInterval(() => { for (let i = 0; i < 1500; i += 1) fetch(${JSON.stringify(url)}).then((r) => r.text(), () => {}); }, 2000);`;
  return spawn(process.execPath, ['-e', source], { stdio: 'ignore' });
}

async function run(kind: 'ioredis' | 'node-redis', redisPort: number): Promise<string> {
  const client =
    kind === 'ioredis'
      ? new Redis({ port: redisPort, maxRetriesPerRequest: 1, commandTimeout: 1000 })
      : await createClient({ socket: { port: redisPort }, disableOfflineQueue: true }).connect();
  const sim = await startSimulator({ rotateRefreshTokens: true, accessTokenLifetimeSeconds: 1 });
  const store = new RedisTokenStore({ redis: client, prefix: `bursts-${kind}:` });
  const login = platformLogin({
    authUrl: sim.url,
    clientId: DEMO_CLIENT_ID,
    clientSecret: DEMO_CLIENT_SECRET,
    redirectUri: REDIRECT_URI,
    logger: QUIET,
    platformOrigins: [new URL(sim.url).origin],
    entry: { context: { allowMissingHeaders: true } },
    store,
  });
  const app = express();
  app.get('/ping', (_req, res) => void res.send('pong'));
  app.use(
    session({
      secret: 'a-bench-session-secret-that-is-long-enough',
      resave: false,
      saveUninitialized: false,
      store: new RedisSessionStore({ redis: client }),
    }),
  );
  app.use('/platform/callback', login.callback);
  app.use('/api', login.middleware());
  app.get('/api/token', async (req, res, next) => {
    try {
      res.json({ accessToken: await req.platformToken() });
    } catch (error) {
      next(error);
    }
  });
  app.use(login.errorHandler());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const cookies = await Promise.all(
    ['player-ada', 'player-bo', 'player-cy'].flatMap((openId) =>
      [1, 2].map(async () => {
        const code = sim.issueCode({ redirectUri: REDIRECT_URI, openId });
        const res = await fetch(`${base}/platform/callback?code=${code}`, { redirect: 'manual' });
        return res.headers.getSetCookie()[0]!.split(';')[0]!;
      }),
    ),
  );
  sim.resetCalls();
  const flood = bursts(`${base}/ping`);
  const statuses: number[] = [];
  const latencies: number[] = [];
  const until = Date.now() + DURATION_MS;
  await Promise.all(
    cookies.map(async (cookie) => {
      while (Date.now() < until) {
        const started = performance.now();
        const res = await fetch(`${base}/api/token`, { headers: { cookie } });
        await res.arrayBuffer();
        latencies.push(performance.now() - started);
        statuses.push(res.status);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }),
  );
  flood.kill();
  server.close();
  await store.close();
  await sim.close();
  if (kind === 'ioredis') (client as Redis).disconnect();
  else await (client as { close(): Promise<unknown> }).close();
  const slowest = Math.max(...latencies);
  const failed = statuses.filter((status) => status !== 200).length;
  return `| ${kind} | ${statuses.length} | ${failed} | ${slowest.toFixed(0)} | ${sim.calls.refresh_token} |`;
}

async function main(): Promise<void> {
  const port = await freePort();
  const redis = spawn(
    'redis-server',
    ['--port', String(port), '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  try {
    console.log(
      `Bursts of 1,500 requests every 2 s for ${DURATION_MS / 1000} s, six logins with 1-second tokens:`,
    );
    console.log('| client | player requests | not 200 | slowest (ms) | platform refreshes |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const kind of ['ioredis', 'node-redis'] as const) console.log(await run(kind, port));
  } finally {
    redis.kill();
  }
}

void main();
