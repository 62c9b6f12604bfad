// The bounds an attack round found open (issue #41, items 2–4), on a real redis-server and the
// simulator: a socket closes with 4401 within a second of its token record's known expiry even
// while Redis has not removed the key; a session ended outside `login.logout()` (the app's own
// `req.session.destroy()`, `DEL sess:<id>`) closes its sockets; and a socket.io socket resumed by
// connection state recovery, on polling and on websocket, is followed again: a logout disconnects
// it, where it used to go on answering the player's profile.
import request from 'supertest';
import { Redis } from 'ioredis';
import { io as socketIoClient, type Socket as ClientSocket } from 'socket.io-client';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { hashSessionId } from '../../lib/core/hash';
import { startRedisServer, type TestRedisServer } from '../helpers/redis-server';
import { enterAs } from '../helpers/spawn-socket-backends';
import { startSocketBoundsApp, type SocketBoundsApp } from '../helpers/socket-bounds-app';
import { closedWithin, CLOSE_WITHIN_MS, open } from '../helpers/socket-bed';
import { LOAD_ALLOWANCE_MS } from '../helpers/load-allowance';

const PREFIX = 'wsb:';
/** The short session (and so token record) lifetime of the expiry test. */
const SHORT_SESSION_MS = 6000;

let redisServer: TestRedisServer;
let sim: PlatformSimulator;
let raw: Redis;
let app: SocketBoundsApp;
let shortApp: SocketBoundsApp;
const clients: ClientSocket[] = [];

beforeAll(async () => {
  [redisServer, sim] = await Promise.all([
    startRedisServer(['--enable-debug-command', 'yes']),
    startSimulator(),
  ]);
  raw = new Redis(redisServer.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  [app, shortApp] = await Promise.all([
    startSocketBoundsApp({ sim, redis: raw, prefix: PREFIX }),
    startSocketBoundsApp({ sim, redis: raw, prefix: PREFIX, sessionMaxAgeMs: SHORT_SESSION_MS }),
  ]);
}, 30_000);
afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.all([app?.close(), shortApp?.close()]);
  raw?.disconnect();
  await Promise.all([redisServer?.stop(), sim?.close()]);
});

const recordKey = (sessionId: string) => `${PREFIX}t:t:${hashSessionId(sessionId)}`;

describe("a socket ends at its token record's known expiry, whether or not Redis removed the key", () => {
  afterEach(async () => {
    await raw.call('DEBUG', 'SET-ACTIVE-EXPIRE', '1');
  });

  test('Redis expiring nothing on its own: the socket closes 4401 within a second of the expiry', async () => {
    // What many keys with TTLs make of Redis's sampling: an expired key stays until it is read.
    await raw.call('DEBUG', 'SET-ACTIVE-EXPIRE', '0');
    const browser = await enterAs(shortApp.url, sim, 'player-ada');
    const socket = await open(shortApp.url, browser.cookie);
    // The expiry lies between these two readings plus the TTL (a stall may come between them).
    const askedAt = Date.now();
    const ttl = await raw.pttl(recordKey(browser.sessionId));
    const answeredAt = Date.now();
    expect(ttl).toBeGreaterThan(0);
    expect(await socket.profile()).toMatchObject({ type: 'profile', status: 200 });
    const closed = await closedWithin(socket, answeredAt + ttl, CLOSE_WITHIN_MS + SHORT_SESSION_MS);
    expect(closed).toMatchObject({ code: 4401, reason: 'login_required' });
    // Not before the record's end, and within a second of it (and the load allowance).
    expect(closed.at).toBeGreaterThanOrEqual(askedAt + ttl - 50);
    expect(closed.at - (answeredAt + ttl)).toBeLessThanOrEqual(CLOSE_WITHIN_MS + LOAD_ALLOWANCE_MS);
    // No profile frame answered past the expiry.
    expect(socket.frames.filter((frame) => frame.type === 'profile')).toHaveLength(1);
  });
});

describe('a session ended outside login.logout() closes its sockets with 4401 within a second', () => {
  test("the app's own req.session.destroy()", async () => {
    const browser = await enterAs(app.url, sim, 'player-bo');
    const socket = await open(app.url, browser.cookie);
    await request(app.url).post('/destroy').set('Cookie', browser.cookie).expect(204);
    // The session has ended once its destroy is answered: the second runs from there.
    const since = Date.now();
    expect(await closedWithin(socket, since)).toMatchObject({
      code: 4401,
      reason: 'login_required',
    });
  });

  test('the session deleted in Redis by hand (DEL sess:<id>)', async () => {
    const browser = await enterAs(app.url, sim, 'player-cy');
    const socket = await open(app.url, browser.cookie);
    expect(await socket.profile()).toMatchObject({ type: 'profile', status: 200 });
    const since = Date.now();
    expect(await raw.del(`${PREFIX}s:${browser.sessionId}`)).toBe(1);
    expect(await closedWithin(socket, since)).toMatchObject({
      code: 4401,
      reason: 'login_required',
    });
  });
});

describe.each(['polling', 'websocket'] as const)(
  'socket.io connection state recovery (%s): a resumed socket is followed again',
  (transport) => {
    test('resumed, it answers the profile; after a logout it is told and disconnected within a second', async () => {
      const browser = await enterAs(app.url, sim, 'player-ada');
      const client = socketIoClient(app.url, {
        extraHeaders: { Cookie: browser.cookie },
        transports: [transport],
        reconnectionDelay: 50,
        reconnectionDelayMax: 50,
      });
      clients.push(client);
      await new Promise((resolve) => client.once('hello', resolve));
      expect(client.recovered).toBe(false);
      // The transport drops for a moment (a network blip): socket.io resumes the socket. It can
      // only when the server has seen the old transport close before the reconnect arrives, which
      // is socket.io's race, not the package's: the blip is made again until a resume happens.
      for (let blip = 0; blip < 5 && !client.recovered; blip += 1) {
        const resumed = new Promise((resolve) => client.once('hello', resolve));
        client.io.engine.close();
        await resumed;
      }
      expect(client.recovered).toBe(true);
      expect(await client.emitWithAck('profile')).toMatchObject({ status: 200 });

      const ended = new Promise<unknown>((resolve) => client.once('platform:login_ended', resolve));
      const gone = new Promise<string>((resolve) => client.once('disconnect', resolve));
      const since = Date.now();
      await request(app.url).post('/logout').set('Cookie', browser.cookie).expect(204);
      const told = await Promise.race([
        ended,
        new Promise((resolve) =>
          setTimeout(() => resolve('still connected'), CLOSE_WITHIN_MS + LOAD_ALLOWANCE_MS),
        ),
      ]);
      expect(told).toEqual({ code: 4401, error: 'login_required' });
      expect(await gone).toBe('io server disconnect');
      expect(Date.now() - since).toBeLessThanOrEqual(CLOSE_WITHIN_MS + LOAD_ALLOWANCE_MS);
    });
  },
);
