// What N made-up codes cost the service: platform calls (each spends the game's client
// credentials), claim keys left in Redis, and the time to answer them all — sent by one client
// address with the platform's context headers (a script can forge those; the failure limit is what
// bounds it). `node -r esbuild-register bench/made-up-codes.ts [N]`; EPL_LIB=<dir> measures another
// copy of lib/ (e.g. the code before the limit), EPL_OPTIONS='{"entryFailureLimit":0}' adds options.
import express from 'express';
import session from 'express-session';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { startSimulator } from '../lib/simulator';
import { startRedisServer } from '../test/helpers/redis-server';
import { closedLoop, keepAliveAgent, statusList } from './lib/load';

const N = Number(process.argv[2] ?? 2000);
const CONCURRENCY = 16;
const PLATFORM = 'https://platform.example';

async function main(): Promise<void> {
  const lib = resolve(process.env.EPL_LIB ?? resolve(__dirname, '../lib'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { platformLogin, RedisTokenStore } = require(lib) as typeof import('../lib');
  const extra = JSON.parse(process.env.EPL_OPTIONS ?? '{}') as Record<string, unknown>;
  const server = await startRedisServer();
  const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  const sim = await startSimulator();
  const prefix = 'bench-made-up:';
  const login = platformLogin({
    authUrl: sim.url,
    clientId: 'demo-game',
    clientSecret: 'demo-secret',
    redirectUri: 'http://127.0.0.1:3999/platform/callback',
    store: new RedisTokenStore({ redis, prefix }),
    ...extra,
  });
  const app = express();
  app.use(
    session({ secret: randomBytes(24).toString('hex'), resave: false, saveUninitialized: false }),
  );
  app.use('/platform/callback', login.callback);
  const listening = app.listen(0, '127.0.0.1');
  await new Promise((done) => listening.once('listening', done));
  const port = (listening.address() as { port: number }).port;
  const agent = keepAliveAgent(CONCURRENCY);
  try {
    const startedAt = performance.now();
    const result = await closedLoop({
      agent,
      concurrency: CONCURRENCY,
      durationMs: 600_000,
      next: (index) =>
        index < N
          ? {
              port,
              path: `/platform/callback?code=made-up-${index}-${randomBytes(8).toString('hex')}`,
              headers: {
                accept: 'application/json',
                referer: `${PLATFORM}/`,
                'sec-fetch-site': 'cross-site',
                'sec-fetch-dest': 'document',
              },
            }
          : undefined,
    });
    const seconds = (performance.now() - startedAt) / 1000;
    const claimKeys = (await redis.keys(`${prefix}c:*`)).length;
    const lines = [
      `lib: ${lib}${Object.keys(extra).length > 0 ? `, options ${JSON.stringify(extra)}` : ''}`,
      `${N} made-up codes from one address, ${CONCURRENCY} connections`,
      `platform calls (authorization_code): ${sim.calls.authorization_code}`,
      `claim keys in Redis: ${claimKeys}`,
      `time: ${seconds.toFixed(2)} s (${Math.round(N / seconds)} req/s)`,
      `answers: ${statusList(result.statuses)}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    agent.destroy();
    listening.close();
    redis.disconnect();
    await sim.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
