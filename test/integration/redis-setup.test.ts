import { Redis } from 'ioredis';

test('the global setup hands the tests a working redis-server', async () => {
  expect(process.env.REDIS_URL).toMatch(/^redis:\/\//);
  const redis = new Redis(process.env.REDIS_URL!);
  try {
    await redis.set('epl:probe', 'ok');
    expect(await redis.get('epl:probe')).toBe('ok');
  } finally {
    redis.disconnect();
  }
});
