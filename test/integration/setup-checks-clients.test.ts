// checkSetup()'s eviction check on every client kind the store accepts: CONFIG GET reaches Redis
// through node-redis (RESP2 and RESP3 answers) as through ioredis, and an evicting Redis is named.
import { checkSetup } from '../../lib/setup/setup-checks';
import { clientKinds } from '../helpers/redis-clients';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';

let server: TestRedisServer;
beforeAll(async () => {
  server = await startRedisServer(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
});
afterAll(() => server.stop());

test.each(clientKinds)('$name: an evicting Redis is a warning', async (kind) => {
  const client = await kind.connect({ port: server.port });
  try {
    const problems = await checkSetup({ redis: client, warn: () => undefined });
    expect(problems.map((problem) => problem.check)).toEqual(['redis-evicts-keys']);
  } finally {
    await kind.quit(client);
  }
});
