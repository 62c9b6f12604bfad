// UnreadableSessions: which sessions' records the store just failed to read, so that the middleware
// does not end a login that another process may read well.
import { UnreadableSessions } from '../../lib/core/unreadable-sessions';

test('a reported session is taken once', () => {
  const sessions = new UnreadableSessions();
  sessions.add('hash-a');
  expect(sessions.take('hash-b')).toBe(false);
  expect(sessions.take('hash-a')).toBe(true);
  expect(sessions.take('hash-a')).toBe(false);
});

test('holds at most 1,024 sessions, the oldest out first', () => {
  const sessions = new UnreadableSessions();
  for (let index = 0; index <= 1024; index += 1) sessions.add(`hash-${index}`);
  expect(sessions.take('hash-0')).toBe(false);
  expect(sessions.take('hash-1')).toBe(true);
  expect(sessions.take('hash-1024')).toBe(true);
});
