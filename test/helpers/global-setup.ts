// Jest global setup of the integration project: one private redis-server for the whole run, its
// URL handed to the test workers through REDIS_URL. A REDIS_URL already set is used as it is.
import {
  startRedisServer,
  redisServerAvailable,
  REDIS_MISSING_MESSAGE,
  type TestRedisServer,
} from './redis-server';

declare global {
  var __EPL_REDIS__: TestRedisServer | undefined;
}

export default async function globalSetup(): Promise<void> {
  if (process.env.REDIS_URL) return;
  if (!redisServerAvailable()) throw new Error(REDIS_MISSING_MESSAGE);
  const server = await startRedisServer();
  globalThis.__EPL_REDIS__ = server;
  process.env.REDIS_URL = server.url;
  process.env.EPL_TEST_REDIS_PID = String(server.pid);
}
