// One bench app process: BENCH_APP=floor|floor-in-memory|package|package-sessions on BENCH_CLIENT=ioredis|node-redis, Redis at
// REDIS_URL, the simulator at SIM_URL (package). Prints "listening <port>"; SIGTERM ends it.
// The example app is not started here: sections run example-app/server.ts as `npm run example` does.
import { createServer } from 'node:http';
import type { Express } from 'express';
import session from 'express-session';
import { RedisSessionStore } from '../../lib';
import { packageApp } from './package-app';
import {
  CLIENT_CHOICES,
  connectRedis,
  floorApp,
  sessionStoreOn,
  type ClientChoice,
} from './session-stack';

async function main(): Promise<void> {
  const choice = (process.env.BENCH_CLIENT ?? 'ioredis') as ClientChoice;
  if (!CLIENT_CHOICES.includes(choice)) throw new TypeError(`BENCH_CLIENT: ${choice}`);
  const redis = await connectRedis(choice, process.env.REDIS_URL!);
  const kind = process.env.BENCH_APP;
  const app: Express =
    kind === 'floor'
      ? floorApp(sessionStoreOn(redis))
      : kind === 'floor-in-memory'
        ? floorApp(new session.MemoryStore())
        : kind === 'package'
          ? packageApp(redis, process.env.SIM_URL!).app
          : kind === 'package-sessions'
            ? packageApp(
                redis,
                process.env.SIM_URL!,
                new RedisSessionStore({ redis: redis.client }),
              ).app
            : (() => {
                throw new TypeError(
                  'BENCH_APP must be "floor", "floor-in-memory", "package" or "package-sessions".',
                );
              })();
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
