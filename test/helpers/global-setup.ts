// Jest global setup of the projects that use Redis: one private redis-server per Jest worker, their
// URLs handed to the workers through EPL_TEST_REDIS_URLS; worker-redis.ts (a setup file) points each
// test file's REDIS_URL at its worker's server. The test files of one worker run one at a time, so
// a test that counts the commands its server received (INFO commandstats) sees only its own, while
// other workers run other files. A REDIS_URL already set is used as it is, by every worker (then run
// with --maxWorkers=1 for those counts to hold).
import {
  startRedisServer,
  redisServerAvailable,
  REDIS_MISSING_MESSAGE,
  type TestRedisServer,
} from './redis-server';

declare global {
  var __EPL_REDIS__: TestRedisServer[] | undefined;
}

export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  // Every project with Redis runs this; the first one starts the servers for all.
  if (process.env.REDIS_URL || process.env.EPL_TEST_REDIS_URLS) return;
  if (!redisServerAvailable()) throw new Error(REDIS_MISSING_MESSAGE);
  const workers = Math.max(1, globalConfig.maxWorkers);
  const servers = await Promise.all(Array.from({ length: workers }, () => startRedisServer()));
  globalThis.__EPL_REDIS__ = servers;
  process.env.EPL_TEST_REDIS_URLS = servers.map((server) => server.url).join(' ');
}
