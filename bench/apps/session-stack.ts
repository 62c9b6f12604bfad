// The session stack the package apps are built on, as the floor (floor.js) has it: express +
// express-session + connect-redis (8.1 on ioredis, 10 on node-redis 6) with client defaults.
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import session from 'express-session';
import { RedisStore as RedisStore8 } from 'connect-redis8';
import { RedisStore } from 'connect-redis';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { BENCH_SESSION_SECRET } from '../lib/settings';

/** The two Redis clients a studio runs express-session on. */
export type ClientChoice = 'ioredis' | 'node-redis';
export const CLIENT_CHOICES: readonly ClientChoice[] = ['ioredis', 'node-redis'];
/** How the example (REDIS_CLIENT) and the floor (CLIENT) name a client: node-redis is `redis`. */
export const exampleClient = (choice: ClientChoice) => (choice === 'ioredis' ? choice : 'redis');

/** A client of `choice` as a studio holds one, connect-redis on it with its defaults, its close. */
export async function connectRedis(choice: ClientChoice, url: string) {
  if (choice === 'ioredis') {
    const client = new Redis(url);
    const sessionStore = (): session.Store => new RedisStore8({ client });
    return { client, sessionStore, close: async () => void client.disconnect() };
  }
  const client = createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  const sessionStore = (): session.Store => new RedisStore({ client });
  return { client, sessionStore, close: async () => void client.destroy() };
}

/** An Express app with express-session on `store`: what a studio has before any login code. */
export function sessionStackApp(store: session.Store): Express {
  const app = express();
  app.use(
    session({ store, secret: BENCH_SESSION_SECRET, resave: false, saveUninitialized: false }),
  );
  return app;
}

/** Serves `app` on a free loopback port and prints "listening <port>"; SIGTERM closes it, then `close`. */
export function serve(app: RequestListener, close: () => unknown): void {
  const server = createServer(app);
  // The load generator keeps its connections open between windows; the default 5 s would close them.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close();
    void close();
    // Anything still holding the loop open must not keep a finished benchmark waiting.
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
