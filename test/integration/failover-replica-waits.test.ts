// Writes wait for a replica to acknowledge them (docs/durability.md), and what a player gets while
// they wait or when none does in time: a real primary, a replica whose replication stream a test
// makes run a second behind (or 5 s), three sentinels, and two "processes"
// (test/helpers/failover-backends.ts), on both clients. The failovers themselves:
// failover-kills.test.ts.
import request from 'supertest';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import type { SentinelBed } from '../helpers/failover-bed';
import {
  enter,
  LAG_MS,
  rewriteDue,
  tokenOf,
  useSentinelBackends,
  type Backend,
  type Kind,
} from '../helpers/failover-backends';
import { waitUntil } from '../helpers/wait-until';
import { recordAt } from '../helpers/records';

describe.each<Kind>(['ioredis', 'node-redis'])(
  'a Sentinel primary with a lagging replica, on %s',
  (kind) => {
    let bed: SentinelBed;
    let sim: PlatformSimulator;
    let a: Backend;
    useSentinelBackends(kind, (set) => ({ bed, sim, a } = set));

    test('a request whose token is usable never waits for a replica, while a refresh waits for one', async () => {
      const due = await enter(a, sim);
      const fresh = await enter(a, sim);
      expect([due.status, fresh.status]).toEqual([303, 303]);
      await rewriteDue(a, due.sessionKey);
      bed.setReplicationDelay(LAG_MS);
      const order: string[] = [];
      const refreshing = tokenOf(a, due.cookie).then((res) => order.push(`refresh ${res.status}`));
      await waitUntil(() => sim.calls.refresh_token === 1, 'the platform to rotate');
      // The refresh now waits about a second for the replica; the other player is served meanwhile.
      const served = await tokenOf(a, fresh.cookie);
      order.push(`fresh ${served.status}`);
      await refreshing;
      expect(order).toEqual(['fresh 200', 'refresh 200']);
      // The refresh's write was the last to wait, and a replica acknowledged it.
      expect(a.waits.at(-1)).toBe('acknowledged');
    });

    test('a player whose due token still works is served with the refreshed record before a replica holds it; the wait ends after', async () => {
      const player = await enter(a, sim);
      expect(player.status).toBe(303);
      // 30 s left: usable, and inside the 60 s refresh window, so this request refreshes.
      const waitsBeforePut = a.waits.length;
      const record = await rewriteDue(a, player.sessionKey, 30_000, { accessToken: 'at-before' });
      await waitUntil(
        () => a.waits.length > waitsBeforePut,
        "the test's own write to be acknowledged",
      );
      const waitsBefore = a.waits.length;
      bed.setReplicationDelay(LAG_MS);
      const served = await tokenOf(a, player.cookie);
      expect(served.status).toBe(200);
      expect(sim.calls.refresh_token).toBe(1);
      // Answered while the refresh's wait (a second of lag) was still running...
      const stored = (await recordAt(a.store, player.sessionKey))!;
      expect(stored.version).toBe(record.version + 1);
      expect(served.body.accessToken).toBe(stored.accessToken);
      expect(served.body.accessToken).not.toBe('at-before');
      expect(a.waits.length).toBe(waitsBefore);
      // ...which a replica then acknowledged.
      await waitUntil(() => a.waits.length > waitsBefore, "the refresh's wait to end");
      expect(a.waits.at(-1)).toBe('acknowledged');
    });

    test('a logout no replica acknowledged is answered 503, not 204', async () => {
      const player = await enter(a, sim);
      expect(player.status).toBe(303);
      await bed.caughtUp();
      bed.setReplicationDelay(5000);
      const out = await request(a.app).post('/logout').set('Cookie', player.cookie);
      expect(out.status).toBe(503);
      expect(out.body.error).toBe('store_unavailable');
      // The deletion was made on the primary all the same: the player is logged out there.
      expect((await tokenOf(a, player.cookie)).status).toBe(401);
    });

    test('with the replica too far behind, the player is answered after the timeout, and the wait is counted', async () => {
      await bed.caughtUp();
      bed.setReplicationDelay(5000);
      const player = await enter(a, sim);
      expect(player.status).toBe(303);
      expect(a.waits.at(-1)).toBe('timeout');
    });
  },
);
