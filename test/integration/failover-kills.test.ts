// A Redis Sentinel failover loses no login and undoes no logout (docs/durability.md): a real
// primary, a replica whose replication stream a test makes run a second behind, three sentinels,
// and two "processes" (test/helpers/failover-backends.ts), the primary killed (SIGKILL) at the
// worst moments, on both clients. The platform (the simulator) rotates refresh tokens and counts a retired
// one presented. The waits for a replica with no failover: failover-replica-waits.test.ts.
import request from 'supertest';
import { Redis } from 'ioredis';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import type { SentinelBed } from '../helpers/failover-bed';
import {
  enter,
  keepAsking,
  LAG_MS,
  onServer,
  rewriteDue,
  storedOn,
  tokenOf,
  useSentinelBackends,
  type Backend,
  type Kind,
} from '../helpers/failover-backends';
import { TEST_REDIRECT_URI } from '../helpers/test-app';
import { eventually, valueOnce, waitUntil } from '../helpers/wait-until';
import { recordAt } from '../helpers/records';

describe.each<Kind>(['ioredis', 'node-redis'])('a Sentinel failover on %s', (kind) => {
  let bed: SentinelBed;
  let sim: PlatformSimulator;
  let a: Backend;
  let b: Backend;
  useSentinelBackends(kind, (set) => ({ bed, sim, a, b } = set));

  test('a refresh killed before the replica has its record: the record is written back, no retired token is spent, no 401', async () => {
    const player = await enter(a, sim);
    expect(player.status).toBe(303);
    // The login on the replica, whatever the store waited for.
    await bed.caughtUp();
    // The access token is due; its refresh is acknowledged on the replica like any other write.
    const replaced = await rewriteDue(a, player.sessionKey);
    await bed.caughtUp();

    // The platform rotates the refresh token; the primary dies before the new record reaches the
    // replica (it is a second behind from here).
    bed.setReplicationDelay(LAG_MS);
    const refreshing = tokenOf(a, player.cookie).then((res) => res);
    await waitUntil(() => sim.calls.refresh_token === 1, 'the platform to rotate');
    await waitUntil(
      async () =>
        (await storedOn(bed.primary.port, player.sessionKey))?.startsWith(
          `${replaced.version + 1}|`,
        ) === true,
      'the rotated record on the primary',
    );
    await bed.killPrimary();
    const answered = await refreshing;
    // Answered with the new token (the record is kept in this process and written back), or 503.
    expect([200, 503]).toContain(answered.status);

    const other = keepAsking(b, player.cookie);
    const own = keepAsking(a, player.cookie);
    await bed.waitForPromotion();
    // Both processes serve the player again, with the rotated token.
    expect(
      await eventually(async () => (await tokenOf(b, player.cookie)).status === 200, 20_000),
    ).toBe(true);
    await other.stop();
    await own.stop();
    const stored = await valueOnce(
      () => recordAt(b.store, player.sessionKey),
      (record) => record !== undefined && record.version > replaced.version,
    );
    expect(stored?.version).toBe(replaced.version + 1);
    expect(sim.retiredTokenReuses).toBe(0);
    expect(
      [...other.statuses, ...own.statuses].filter((s) => s === 401 || (s >= 500 && s !== 503)),
    ).toEqual([]);
    expect((await tokenOf(a, player.cookie)).body.accessToken).toBe(stored?.accessToken);
  });

  test('an entry whose writes did not reach the replica is not answered 303: the player enters again', async () => {
    // The backend has served an entry before (its scripts loaded, its connections open), as a
    // running game's has: the first entry of a new client on a loaded machine can outlast the
    // store's deadline (operationTimeoutMs) before its code exchange.
    expect((await enter(a, sim, 'player-bo')).status).toBe(303);
    await bed.caughtUp();
    const keysBefore = await onServer(bed.primary.port, (server) => server.keys('*'));
    bed.setReplicationDelay(LAG_MS);
    const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI, openId: 'player-ada' });
    let answered: request.Response | undefined;
    const entering = request(a.app)
      .get(`/platform/callback?code=${code}`)
      .then((res) => (answered = res));
    const first = await valueOnce(
      () =>
        sim.calls.authorization_code === 2
          ? 'the code exchange'
          : answered && `an answer ${answered.status} ${answered.text}`,
      (what) => what !== undefined,
    );
    expect(first).toBe('the code exchange');
    await waitUntil(async () => {
      const keys = await onServer(bed.primary.port, (server) => server.keys('*'));
      const added = keys.filter((key) => !keysBefore.includes(key));
      return ['fo:t:', 'sess:'].every((prefix) => added.some((key) => key.startsWith(prefix)));
    }, "the login's record and session on the primary");
    await bed.killPrimary();
    const answer = await entering;
    expect(answer.status).toBe(503);
    expect(answer.body.error).toBe('store_unavailable');
    await bed.waitForPromotion();
    expect(await eventually(async () => (await enter(b, sim)).status === 303, 20_000)).toBe(true);
  });

  test('a logout killed before the replica has the deletion stays a logout', async () => {
    const player = await enter(a, sim);
    expect(player.status).toBe(303);
    bed.setReplicationDelay(LAG_MS);
    const out = request(a.app)
      .post('/logout')
      .set('Cookie', player.cookie)
      .then((res) => res);
    // The deletion is made at once; its wait for the replica takes the lag.
    await waitUntil(
      async () => (await storedOn(bed.primary.port, player.sessionKey)) === null,
      'the deletion on the primary',
    );
    await bed.killPrimary();
    await out;
    await bed.waitForPromotion();
    // B's first reads may still meet its client's switch to the new primary.
    expect(
      await eventually(
        () =>
          recordAt(b.store, player.sessionKey).then(
            (record) => record === undefined,
            () => false,
          ),
        20_000,
      ),
    ).toBe(true);
    expect((await tokenOf(b, player.cookie)).status).toBe(401);
  });

  test('a log out everywhere no replica acknowledged is answered 503; asked again once the primary and that process died, it holds: no logged-out session is served, the new primary keeps only the bystander', async () => {
    const ada = [await enter(a, sim), await enter(a, sim)];
    const bystander = await enter(a, sim, 'player-bo');
    expect([...ada, bystander].map((player) => player.status)).toEqual([303, 303, 303]);
    await bed.caughtUp();
    // The replica falls 5 s behind, beyond the 2 s wait.
    bed.setReplicationDelay(5000);
    const everywhere = (through: Backend) =>
      request(through.app).post('/logout-everywhere').send({ openId: 'player-ada' });
    const first = await everywhere(b);
    expect(first.status).toBe(503);
    expect(first.body.error).toBe('store_unavailable');
    // The primary dies before its replica has the deletions, and the process that made them too.
    await bed.killPrimary();
    await b.close();
    const promoted = await bed.waitForPromotion();
    // Asked again (on the surviving process): answered once the new primary holds the deletions.
    expect(await eventually(async () => (await everywhere(a)).status === 200, 20_000)).toBe(true);
    for (const player of ada) {
      const asked = await Promise.all([1, 2, 3].map(() => tokenOf(a, player.cookie)));
      expect(asked.map((res) => res.status)).toEqual([401, 401, 401]);
    }
    expect((await tokenOf(a, bystander.cookie)).status).toBe(200);
    const primary = new Redis({ host: promoted.host, port: promoted.port });
    try {
      const keys = (await primary.keys('fo:t:*')).sort();
      expect(keys).toEqual([`fo:t:${bystander.sessionKey}`]);
    } finally {
      primary.disconnect();
    }
  });
});
