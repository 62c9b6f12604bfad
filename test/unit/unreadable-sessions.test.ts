// UnreadableSessions: which sessions' records the store just failed to read, so that the middleware
// does not end a login that another process may read well.
import { hashSessionId } from '../../lib/core/hash';
import { UnreadableSessions } from '../../lib/core/unreadable-sessions';

test('a session reported by its hash is taken once, by its id', () => {
  const sessions = new UnreadableSessions();
  sessions.add(hashSessionId('session-a'));
  expect(sessions.take('session-b')).toBe(false);
  expect(sessions.take('session-a')).toBe(true);
  expect(sessions.take('session-a')).toBe(false);
});

test('holds at most 1,024 sessions, the oldest out first', () => {
  const sessions = new UnreadableSessions();
  for (let index = 0; index <= 1024; index += 1) sessions.add(hashSessionId(`session-${index}`));
  expect(sessions.take('session-0')).toBe(false);
  expect(sessions.take('session-1')).toBe(true);
  expect(sessions.take('session-1024')).toBe(true);
});
