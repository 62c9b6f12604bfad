// The line said for a Redis client's connection error: a dropped connection gets the same advice
// whichever way the client names it (a restart may close the socket or reset it).
import { EventEmitter } from 'node:events';
import type { PlatformLogger } from '../../lib/observability/logger';
import { reportRedisErrors } from '../../lib/stores/redis-error-report';

function errorLines(error: unknown): string[] {
  const lines: string[] = [];
  const note = (_fields: object, message: string) => void lines.push(message);
  const logger: PlatformLogger = { debug: () => {}, info: note, warn: note, error: note };
  const client = new EventEmitter();
  reportRedisErrors(client, { logger, url: 'redis://:secret-pass@redis-1:6379' });
  client.emit('error', error);
  return lines;
}

class SocketClosedUnexpectedlyError extends Error {}

test.each([
  [
    'a clean close (node-redis)',
    new SocketClosedUnexpectedlyError('Socket closed unexpectedly'),
    'SocketClosedUnexpectedlyError',
  ],
  ['a reset', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'ECONNRESET'],
  ['a write after the close', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }), 'EPIPE'],
])(
  '%s: one line that names the code and asks about a restart or failover',
  (_name, error, code) => {
    const [line, ...more] = errorLines(error);
    expect(more).toEqual([]);
    expect(line).toContain(`is unreachable (${code}): `);
    expect(line).toMatch(
      /^Redis at redis:\/\/redis-1:6379 is unreachable \(\w+\): the connection was dropped: did Redis at REDIS_URL=redis:\/\/redis-1:6379 restart or fail over, close idle clients \(its timeout\), or does it want TLS \(rediss:\/\/\)\? /,
    );
    expect(line).not.toContain('secret-pass');
  },
);
