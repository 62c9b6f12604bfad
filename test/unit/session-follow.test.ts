// SessionFollow reads a followed session on each notice of its store; a notice that comes while a
// read is in flight must not be lost, since that read may have been answered before the change.
import type { Store } from 'express-session';
import { SessionFollow } from '../../lib/sockets/session-follow';

type Answer = (error: unknown, session?: { platformLogin?: { openId: string } } | null) => void;

/** A store whose reads are answered by the test, in order, and whose notices the test sends. */
function heldStore() {
  const reads: Answer[] = [];
  let notify: () => void = () => undefined;
  const store = {
    serving: true,
    watchSession(_sid: string, onChange: () => void) {
      notify = onChange;
      return () => undefined;
    },
    get(_sid: string, callback: Answer) {
      reads.push(callback);
    },
  } as unknown as Store;
  return { store, reads, notify: () => notify() };
}

test('a notice during a read reads again: a session destroyed meanwhile ends the login', () => {
  const ended: string[] = [];
  const follow = new SessionFollow(async (sessionKey) => void ended.push(sessionKey));
  const { store, reads, notify } = heldStore();
  follow.follow(store, 'sid-1', 'key-1', 'player-ada');
  notify(); // the store's own destroy, told before its DEL
  expect(reads).toHaveLength(1);
  notify(); // the DEL done, told while the first read is still in flight
  reads[0]!(null, { platformLogin: { openId: 'player-ada' } }); // read before the DEL: still there
  expect(ended).toEqual([]);
  expect(reads).toHaveLength(2); // read again
  reads[1]!(null, null); // gone
  expect(ended).toEqual(['key-1']);
});

test('notices with the session unchanged end nothing, and a read is not repeated without one', () => {
  const ended: string[] = [];
  const follow = new SessionFollow(async (sessionKey) => void ended.push(sessionKey));
  const { store, reads, notify } = heldStore();
  follow.follow(store, 'sid-2', 'key-2', 'player-bo');
  notify();
  reads[0]!(null, { platformLogin: { openId: 'player-bo' } });
  expect(reads).toHaveLength(1);
  notify();
  reads[1]!(new Error('store down'));
  expect(reads).toHaveLength(2);
  expect(ended).toEqual([]);
});
