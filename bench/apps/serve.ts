// One bench app process: BENCH_APP=package|package-sessions|package-without-middleware on
// BENCH_CLIENT=ioredis|node-redis, Redis at REDIS_URL, the simulator at SIM_URL. Prints
// "listening <port>"; SIGTERM ends it. The floor is apps/floor.js (plain JavaScript) and the example
// is example-app/server.ts as `npm run example` starts it: neither runs here.
import { createServer } from 'node:http';
import type { Express } from 'express';
import { RedisSessionStore } from '../../lib';
import { packageApp } from './package-app';
import { CLIENT_CHOICES, connectRedis, type ClientChoice } from './session-stack';

async function main(): Promise<void> {
  const choice = (process.env.BENCH_CLIENT ?? 'ioredis') as ClientChoice;
  if (!CLIENT_CHOICES.includes(choice)) throw new TypeError(`BENCH_CLIENT: ${choice}`);
  const redis = await connectRedis(choice, process.env.REDIS_URL!);
  const kind = process.env.BENCH_APP;
  if (kind !== 'package' && kind !== 'package-sessions' && kind !== 'package-without-middleware') {
    throw new TypeError(
      'BENCH_APP must be "package", "package-sessions" or "package-without-middleware".',
    );
  }
  const app: Express = packageApp(
    redis,
    process.env.SIM_URL!,
    // A prefix of its own: RedisSessionStore hears every write under its prefix (broadcast
    // tracking), and connect-redis's `sess:` is written on every request of the floor's and the
    // package's windows while this process sits idle beside them.
    kind === 'package-sessions'
      ? new RedisSessionStore({ redis: redis.client, prefix: 'bench:sessions:' })
      : undefined,
    kind !== 'package-without-middleware',
  ).app;
  const server = createServer(app);
  // The load generator keeps its connections open between windows.
  server.keepAliveTimeout = 120_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(
      `listening ${typeof address === 'object' && address ? address.port : 0}\n`,
    );
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close();
    void redis.close();
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
