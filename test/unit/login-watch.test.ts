// The login watch of the sockets: one store watch per session however many sockets it has, one
// read per notice, no read at all while nothing changes and the notices are live, and polling at
// the stated bound while they are not. The store is a stand-in that counts what it is asked.
import { LoginWatch, POLL_INTERVAL_MS } from '../../lib/sockets/login-watch';
import type { RecordRead } from '../../lib/core/store-engine';
import type { Store } from 'express-session';
import type { TokenRecord } from '../../lib/core/token-record';

const record = (openId: string, version = 1): TokenRecord =>
  ({ openId, version, accessToken: 'a', refreshToken: 'r', scope: [] }) as unknown as TokenRecord;

/** A store with notices: `notify(key)` plays a change; `reads` counts the reads. */
function fakeSource(initial: Record<string, RecordRead>) {
  const states = new Map(Object.entries(initial));
  const watchers = new Map<string, Set<() => void>>();
  const source = {
    reads: 0,
    watches: 0,
    changes: {
      live: true,
      watch(key: string, onChange: () => void) {
        source.watches += 1;
        if (!watchers.has(key)) watchers.set(key, new Set());
        watchers.get(key)!.add(onChange);
        return () => watchers.get(key)!.delete(onChange);
      },
    },
    read: async (key: string): Promise<RecordRead> => {
      source.reads += 1;
      return states.get(key) ?? { status: 'absent' };
    },
    set: (key: string, state: RecordRead) => states.set(key, state),
    notify: (key: string) => watchers.get(key)?.forEach((onChange) => onChange()),
    watching: (key: string) => watchers.get(key)?.size ?? 0,
  };
  return source;
}

const listener = (openId: string) => {
  const seen = { ended: 0, renewed: [] as number[] };
  return {
    seen,
    openId,
    renewed: (r: TokenRecord) => void seen.renewed.push(r.version),
    ended: () => void (seen.ended += 1),
  };
};

const settle = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => jest.useRealTimers());

test('1,000 sockets of one session: one watch; nothing is read while nothing changes', async () => {
  jest.useFakeTimers();
  const source = fakeSource({ s1: { status: 'found', record: record('ada') } });
  const watch = new LoginWatch(source);
  const listeners = Array.from({ length: 1000 }, () => listener('ada'));
  for (const l of listeners) watch.follow('s1', l);
  expect(source.watches).toBe(1);
  expect([watch.size, watch.listenerCount]).toEqual([1, 1000]); // the two gauges
  jest.advanceTimersByTime(60_000);
  await Promise.resolve();
  expect(source.reads).toBe(0);
  watch.close();
});

test('a notice: one read for all the sockets of the session; an ended login ends each once and stops the watch', async () => {
  const source = fakeSource({ s1: { status: 'found', record: record('ada') } });
  const watch = new LoginWatch(source);
  const a = listener('ada');
  const b = listener('ada');
  watch.follow('s1', a);
  watch.follow('s1', b);
  source.set('s1', { status: 'found', record: record('ada', 2) });
  source.notify('s1');
  await settle();
  expect(source.reads).toBe(1);
  expect(a.seen.renewed).toEqual([2]);
  source.set('s1', { status: 'absent' });
  source.notify('s1');
  source.notify('s1'); // a burst while the read is in flight: one more read, not one per notice
  await settle();
  await settle();
  expect(source.reads).toBeLessThanOrEqual(3);
  expect([a.seen.ended, b.seen.ended]).toEqual([1, 1]);
  expect(source.watching('s1')).toBe(0);
  expect(watch.size).toBe(0);
});

test('a record of another player ends the login; a failed read ends nothing', async () => {
  const source = fakeSource({ s1: { status: 'unreadable', reason: 'decrypt' } });
  const watch = new LoginWatch(source);
  const a = listener('ada');
  watch.follow('s1', a);
  source.notify('s1');
  await settle();
  expect(a.seen.ended).toBe(0);
  source.set('s1', { status: 'found', record: record('bo') });
  source.notify('s1');
  await settle();
  expect(a.seen.ended).toBe(1);
});

test('the last socket of a session leaving stops its watch', () => {
  const source = fakeSource({});
  const watch = new LoginWatch(source);
  const unfollowA = watch.follow('s1', listener('ada'));
  const unfollowB = watch.follow('s1', listener('ada'));
  unfollowA();
  expect(source.watching('s1')).toBe(1);
  unfollowB();
  expect(source.watching('s1')).toBe(0);
});

test(`notices down (live false) or no notices at all: every session is read every ${POLL_INTERVAL_MS} ms`, async () => {
  jest.useFakeTimers();
  const source = fakeSource({
    s1: { status: 'found', record: record('ada') },
    s2: { status: 'found', record: record('bo') },
  });
  source.changes.live = false;
  const watch = new LoginWatch(source);
  watch.follow('s1', listener('ada'));
  watch.follow('s2', listener('bo'));
  jest.advanceTimersByTime(POLL_INTERVAL_MS);
  await Promise.resolve();
  expect(source.reads).toBe(2);
  source.changes.live = true;
  jest.advanceTimersByTime(POLL_INTERVAL_MS * 4);
  expect(source.reads).toBe(2);
  watch.close();

  const withoutNotices = new LoginWatch({ read: source.read, changes: undefined });
  withoutNotices.follow('s1', listener('ada'));
  jest.advanceTimersByTime(POLL_INTERVAL_MS);
  expect(source.reads).toBe(3);
  withoutNotices.close();
});

test("the record's known expiry: one read then, though no notice came; a later expiry moves the timer, the record gone ends the login", async () => {
  jest.useFakeTimers({ now: 1_000_000 });
  const source = fakeSource({ s1: { status: 'found', record: record('ada') } });
  const expiries: number[] = [];
  const withExpiry = {
    ...source,
    expiryOf: async () => 1_000_000 + 5000, // a renewal elsewhere gave the record 5 s in all
  };
  const watch = new LoginWatch(withExpiry);
  const a = { ...listener('ada'), expires: (at: number) => void expiries.push(at) };
  watch.follow('s1', a, 1_000_000 + 2000);
  expect(expiries).toEqual([1_002_000]);
  jest.advanceTimersByTime(1999);
  expect(source.reads).toBe(0);
  jest.advanceTimersByTime(1);
  await jest.advanceTimersByTimeAsync(0);
  expect(source.reads).toBe(1);
  expect(expiries).toEqual([1_002_000, 1_005_000]); // still live: the later expiry is waited for
  expect(a.seen.ended).toBe(0);
  source.set('s1', { status: 'absent' }); // Redis drops the expired key when it is read
  await jest.advanceTimersByTimeAsync(3000);
  expect(source.reads).toBe(2);
  expect(a.seen.ended).toBe(1);
  expect(watch.size).toBe(0);
});

// The session, where its store reports changes: a notice that comes while the session is being read
// must not be lost, since that read may have been answered before the change.
type Answer = (error: unknown, session?: { platformLogin?: { openId: string } } | null) => void;

/** A session store whose reads are answered by the test, in order, and whose notices it sends. */
function heldSessionStore() {
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

/** A watch whose record store ends logins into `ended`. */
function sessionWatch(ended: string[]) {
  const source = fakeSource({});
  return new LoginWatch({
    ...source,
    end: async (sessionKey: string) => void ended.push(sessionKey),
  });
}

test('a session notice during a read reads again: a session destroyed meanwhile ends the login', async () => {
  const ended: string[] = [];
  const watch = sessionWatch(ended);
  const { store, reads, notify } = heldSessionStore();
  watch.follow('key-1', listener('player-ada'), undefined, { store, sid: 'sid-1' });
  notify(); // the store's own destroy, told before its DEL
  expect(reads).toHaveLength(1);
  notify(); // the DEL done, told while the first read is still in flight
  reads[0]!(null, { platformLogin: { openId: 'player-ada' } }); // read before the DEL: still there
  await settle();
  expect(ended).toEqual([]);
  expect(reads).toHaveLength(2); // read again
  reads[1]!(null, null); // gone
  await settle();
  expect(ended).toEqual(['key-1']);
  watch.close();
});

test('session notices with the session unchanged end nothing, and a read is not repeated without one', async () => {
  const ended: string[] = [];
  const watch = sessionWatch(ended);
  const { store, reads, notify } = heldSessionStore();
  watch.follow('key-2', listener('player-bo'), undefined, { store, sid: 'sid-2' });
  notify();
  reads[0]!(null, { platformLogin: { openId: 'player-bo' } });
  await settle();
  expect(reads).toHaveLength(1);
  notify();
  reads[1]!(new Error('store down'));
  await settle();
  expect(reads).toHaveLength(2);
  expect(ended).toEqual([]);
  watch.close();
});
