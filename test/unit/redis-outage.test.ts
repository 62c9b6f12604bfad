// Which errors count as "Redis is unreachable or stalled" for the package's error handler.
import { isRedisOutage } from '../../lib/redis/redis-errors';

const named = (name: string, message: string): Error => Object.assign(new Error(message), { name });

test.each([
  [new Error('Command timed out'), true],
  [new Error('Connection is closed.'), true],
  [new Error("Stream isn't writeable and enableOfflineQueue options is false"), true],
  [new Error('connect ECONNREFUSED 127.0.0.1:6379'), true],
  [named('MaxRetriesPerRequestError', 'Reached the max retries per request limit'), true],
  [named('ClusterAllFailedError', 'Failed to refresh slots cache.'), true],
  [new Error('ERR wrong number of arguments'), false],
  [new TypeError("Cannot read properties of undefined (reading 'x')"), false],
  ['Command timed out', false],
  [undefined, false],
])('%p → %p', (error, expected) => {
  expect(isRedisOutage(error)).toBe(expected);
});
