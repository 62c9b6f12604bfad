// Group commit of the waits for a replica (durability/replica-acks.ts), on a scripted link: writes that
// finish while a wait is under way share the next one, a master with no replica is not waited for,
// a failed connection is told, never thrown, and a round's deadlines.
import { ReplicaAcks, type ReplicaWaitOutcome } from '../../lib/durability/replica-acks';
import type { ReplicaLink } from '../../lib/redis/replica-lanes';
import { LANE_READY_MS, ROUND_MARGIN_MS } from '../../lib/durability/windows';
import { stallBed } from '../helpers/stalled-answer';

interface Round {
  lane: number;
  markKey: string;
  /** The lane is open: the mark and WAIT go out, unless the round is over (false). */
  sending(): boolean;
  answer(acknowledged: number): void;
  fail(error: Error): void;
}

/** A link whose WAITs the test answers; `connected` replicas per ROLE. */
function scriptedLink(connected: () => number) {
  const rounds: Round[] = [];
  let roles = 0;
  const link: ReplicaLink = {
    routeOf: (key) => (key.startsWith('b:') ? 'b' : 'a'),
    replicas: async () => {
      roles += 1;
      return connected();
    },
    confirm: (lane, markKey, _replicas, _timeoutMs, _markTtlMs, sending) =>
      new Promise((resolve, reject) =>
        rounds.push({ lane, markKey, sending, answer: resolve, fail: reject }),
      ),
    close: () => undefined,
  };
  return { link, rounds, roles: () => roles };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('writes that finish during a wait share the next one; up to three waits per master at once', async () => {
  const { link, rounds } = scriptedLink(() => 1);
  const outcomes: ReplicaWaitOutcome[] = [];
  const acks = new ReplicaAcks(link, { replicas: 1, timeoutMs: 1000 }, (o) => outcomes.push(o));
  const waits = Array.from({ length: 10 }, (_, i) => acks.confirm(`a:${i}`));
  await tick();
  // The first three start at once on three connections; the other seven join one queued round.
  expect(rounds.map((round) => round.lane)).toEqual([0, 1, 2]);
  rounds[1]!.answer(1);
  await tick();
  await tick();
  expect(rounds.map((round) => round.lane)).toEqual([0, 1, 2, 1]);
  for (const round of rounds) round.answer(1);
  expect(await Promise.all(waits)).toEqual(Array(10).fill('acknowledged'));
  expect(outcomes).toEqual(Array(4).fill('acknowledged'));
});

test('another master has rounds of its own', async () => {
  const { link, rounds } = scriptedLink(() => 1);
  const acks = new ReplicaAcks(link, { replicas: 1, timeoutMs: 1000 }, () => undefined);
  const first = acks.confirm('a:1');
  const second = acks.confirm('b:1');
  await tick();
  expect(rounds.map((round) => round.markKey)).toEqual(['a:1', 'b:1']);
  rounds.forEach((round) => round.answer(1));
  expect(await Promise.all([first, second])).toEqual(['acknowledged', 'acknowledged']);
});

test('no replica: nothing waits, and ROLE is asked again only after a second', async () => {
  const { link, rounds, roles } = scriptedLink(() => 0);
  const acks = new ReplicaAcks(link, { replicas: 1, timeoutMs: 1000 }, () => undefined);
  expect(await acks.confirm('a:1')).toBe('no-replica');
  expect(await acks.confirm('a:2')).toBe('no-replica');
  expect(rounds).toEqual([]);
  expect(roles()).toBe(1);
});

test('fewer acknowledgements than asked is a timeout; a failed connection is "failed", not a throw', async () => {
  const { link, rounds } = scriptedLink(() => 2);
  const acks = new ReplicaAcks(link, { replicas: 2, timeoutMs: 1000 }, () => undefined);
  const short = acks.confirm('a:1');
  await tick();
  rounds[0]!.answer(1);
  expect(await short).toBe('timeout');
  const lost = acks.confirm('a:2');
  await tick();
  rounds[1]!.fail(new Error('connection lost'));
  expect(await lost).toBe('failed');
});

describe("a round's deadlines", () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('a lane slow to open still gives the WAIT its whole time; one never answered fails a margin after it', async () => {
    const { link, rounds } = scriptedLink(() => 1);
    const acks = new ReplicaAcks(link, { replicas: 1, timeoutMs: 1000 }, () => undefined);
    const slowLane = acks.confirm('a:1');
    await jest.advanceTimersByTimeAsync(LANE_READY_MS - 100);
    rounds[0]!.sending();
    await jest.advanceTimersByTimeAsync(1000 + ROUND_MARGIN_MS - 100);
    rounds[0]!.answer(1);
    expect(await slowLane).toBe('acknowledged');

    const unanswered = acks.confirm('a:2');
    await jest.advanceTimersByTimeAsync(0);
    rounds[1]!.sending();
    await jest.advanceTimersByTimeAsync(1000 + ROUND_MARGIN_MS + 1);
    expect(await unanswered).toBe('failed');
  });

  test('a lane not open in time is a timeout (the master answered ROLE); a ROLE never answered fails the round', async () => {
    const { link, rounds } = scriptedLink(() => 1);
    const outcomes: ReplicaWaitOutcome[] = [];
    const acks = new ReplicaAcks(link, { replicas: 1, timeoutMs: 1000 }, (o) => outcomes.push(o));
    const slowLane = acks.confirm('a:1');
    await jest.advanceTimersByTimeAsync(LANE_READY_MS + 1);
    expect(await slowLane).toBe('timeout');
    // Open at last, the lane sends nothing for a round already answered: no WAIT blocks it.
    expect(rounds[0]!.sending()).toBe(false);

    const silent: ReplicaLink = { ...link, replicas: () => new Promise(() => undefined) };
    const unanswered = new ReplicaAcks(silent, { replicas: 1, timeoutMs: 1000 }, (o) =>
      outcomes.push(o),
    ).confirm('a:1');
    await jest.advanceTimersByTimeAsync(LANE_READY_MS + 1);
    expect(await unanswered).toBe('failed');
    expect(outcomes).toEqual(['timeout', 'failed']);
  });
});

test('a lane that opens as its deadline fires gets the WAIT its whole time', async () => {
  // The deadline's call is deferred to the check phase (util/deadline-timer.ts): real immediates.
  jest.useFakeTimers({ doNotFake: ['setImmediate'] });
  try {
    const { link, rounds } = scriptedLink(() => 1);
    const acks = new ReplicaAcks(link, { replicas: 1, timeoutMs: 1000 }, () => undefined);
    const wait = acks.confirm('a:1');
    await jest.advanceTimersByTimeAsync(LANE_READY_MS - 1);
    jest.advanceTimersByTime(1);
    // The lane's deadline has fired, its call not yet made: the lane opens now.
    expect(rounds[0]!.sending()).toBe(true);
    await tick();
    rounds[0]!.answer(1);
    expect(await wait).toBe('acknowledged');
  } finally {
    jest.useRealTimers();
  }
});

test('an answer that arrived while the event loop was stalled past the deadline wins over it', async () => {
  const bed = await stallBed();
  try {
    const link: ReplicaLink = {
      routeOf: () => '',
      replicas: async () => 1,
      confirm: async (_lane, _markKey, _replicas, timeoutMs, _markTtlMs, sending) => {
        sending();
        await bed.answerDuringStall(timeoutMs + ROUND_MARGIN_MS + 200);
        return 1;
      },
      close: () => undefined,
    };
    const acks = new ReplicaAcks(link, { replicas: 1, timeoutMs: 1 }, () => undefined);
    expect(await acks.confirm('a:1')).toBe('acknowledged');
  } finally {
    bed.close();
  }
});
