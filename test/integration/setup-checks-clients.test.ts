// checkSetup()'s Redis checks on every client kind the store accepts: CONFIG GET reaches Redis
// through node-redis (RESP2 and RESP3 answers) as through ioredis, and an evicting Redis is named;
// a node-redis client never connected is named, at start and on the entry it fails.
import request from 'supertest';
import { createClient } from 'redis';
import { checkSetup } from '../../lib/setup/setup-checks';
import { RedisTokenStore } from '../../lib';
import { startSimulator } from '../../lib/simulator';
import { createTestApp, TEST_REDIRECT_URI } from '../helpers/test-app';
import { recordingLogger } from '../helpers/recording-logger';
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

describe('a node-redis client never connected (`await redis.connect()` left out)', () => {
  test('checkSetup refuses the start, naming the call', async () => {
    const client = createClient({ socket: { port: server.port } });
    await expect(checkSetup({ redis: client, warn: () => undefined })).rejects.toMatchObject({
      code: 'ERR_PLATFORM_SETUP',
      message: expect.stringContaining(
        'The Redis client is not connected: node-redis sends nothing before `await redis.connect()`',
      ),
    });
  });

  test("an entry answers 503, and the line says the store's client is closed rather than unreachable", async () => {
    const sim = await startSimulator();
    try {
      const { logger, seen } = recordingLogger();
      const client = createClient({ socket: { port: server.port } });
      const store = new RedisTokenStore({ redis: client, allowPlaintextTokens: true });
      const { app } = createTestApp({ sim, login: { logger, store } });
      const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
      const res = await request(app).get(`/platform/callback?code=${code}`).expect(503);
      expect(res.body).toEqual({ error: 'store_unavailable' });
      expect(seen().map((line) => line.message)).toEqual([
        expect.stringMatching(
          /ERR_PLATFORM_STORE_UNAVAILABLE\): The token store failed the beginEntry script: its Redis client is closed \(node-redis sends nothing before `await client\.connect\(\)`, nor after `close\(\)`\)\.$/,
        ),
      ]);
      expect(sim.calls.authorization_code).toBe(0);
      await store.close();
    } finally {
      await sim.close();
    }
  });
});
