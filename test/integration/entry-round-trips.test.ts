// The round trips an entry makes to Redis (issue 44): the checks, the claim and the login
// generation in one script before the code exchange, and after it one script that deletes the
// replaced session and writes the record, its index, the session and the address's count given
// back. Counted on a real redis-server with MONITOR, which tells the commands a client sent from
// those its scripts ran (source `lua`); INFO commandstats counts both alike.
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { RedisStore as ConnectRedis8 } from 'connect-redis8';
import { platformLogin, RedisSessionStore, RedisTokenStore } from 'express-platform-login';
import type { PlatformSimulator } from 'express-platform-login/simulator';
import type { TestRedisServer } from '../helpers/redis-server';
import { usePrivateRedis } from '../helpers/bed';
import { defaultClientKinds, type ClientKind } from '../helpers/redis-clients';
import { entryApp, loginOptions, TEST_REDIRECT_URI } from '../helpers/test-app';
import { waitUntil } from '../helpers/wait-until';
import { commandCounts } from '../helpers/command-counts';
import { MARK_SUFFIX } from '../../lib/caching/key-tracking';

let server: TestRedisServer;
let sim: PlatformSimulator;
let raw: Redis;
const { closers } = usePrivateRedis((bed) => ({ server, sim, raw } = bed));

/**
 * The connections' setup and the key tracking's own commands (its mark's reads and writes are left
 * out by key, below): not an entry's commands.
 */
// ROLE is durability's look for replicas: at most once a second per store, not once per entry.
const NOT_THE_ENTRY = new Set(['ping', 'client', 'info', 'hello', 'select', 'monitor', 'role']);

/**
 * The commands clients sent (not those scripts ran) while `action` ran, lower-case. MONITOR is read
 * on a socket of the test's own: a client library switching a connection to monitoring may take a
 * feed line for a reply.
 */
async function sentDuring(action: () => Promise<void>): Promise<string[]> {
  const socket = connect(server.port, '127.0.0.1');
  const sent: string[] = [];
  let feed = '';
  let monitoring: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (monitoring = resolve));
  socket.setEncoding('utf8');
  socket.on('error', () => undefined); // destroyed at the end; a reset then is no finding
  socket.on('data', (chunk: string) => {
    feed += chunk;
    const lines = feed.split('\r\n');
    feed = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '+OK') monitoring();
      // `+<time> [<db> <client address, or lua>] "<COMMAND>" "<key>" …`
      const match = /^\+[\d.]+ \[\d+ ([^\]]+)\] "([^"]*)"(?: "([^"]*)")?/.exec(line);
      if (match === null || match[1] === 'lua') continue;
      const name = match[2]!.toLowerCase();
      // The key tracking sets up (again) on its own schedule, writing its database mark.
      const onTrackingMark = match[3]?.endsWith(MARK_SUFFIX) === true;
      if (!NOT_THE_ENTRY.has(name) && !onTrackingMark) sent.push(name);
    }
  });
  socket.write('MONITOR\r\n');
  await started;
  try {
    await action();
    // MONITOR's feed trails the commands it reports: one more command after them marks its end.
    await raw.ping();
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    socket.destroy();
  }
  return sent;
}

interface Game {
  url: string;
  prefix: string;
}

/** The package on `kind`'s client, sessions in RedisSessionStore on that client or in connect-redis. */
async function startGame(kind: ClientKind, sessions: 'ours' | 'connect-redis'): Promise<Game> {
  const client = await kind.connect({ port: server.port });
  const ioClient = sessions === 'connect-redis' ? new Redis(server.url) : undefined;
  const sessionStore =
    sessions === 'ours'
      ? new RedisSessionStore({ redis: client })
      : new ConnectRedis8({ client: ioClient! });
  const prefix = 'rt:';
  const store = new RedisTokenStore({ redis: client, prefix, allowPlaintextTokens: true });
  const login = platformLogin(loginOptions(sim, { store }));
  const app = entryApp(login, { store: sessionStore, api: true }).use(login.errorHandler());
  const http: Server = createServer(app);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await store.close();
    if (sessionStore instanceof RedisSessionStore) await sessionStore.close();
    await kind.quit(client);
    ioClient?.disconnect();
  });
  if (sessionStore instanceof RedisSessionStore)
    await waitUntil(() => sessionStore.serving, 'the session cache to come on');
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, prefix };
}

/** One entry with a fresh code, as the browser holding `cookie` (none: a new browser). */
async function enter(game: Game, cookie?: string): Promise<{ status: number; cookie: string }> {
  const code = sim.issueCode({ redirectUri: TEST_REDIRECT_URI });
  const answer = await fetch(`${game.url}/platform/callback?code=${encodeURIComponent(code)}`, {
    redirect: 'manual',
    headers: cookie === undefined ? {} : { cookie },
  });
  // To the body's end: express-session sends the headers at once but ends the response only once
  // its save at the request's end is written, and that write belongs to this entry.
  await answer.text();
  const set = answer.headers
    .getSetCookie()
    .find((c) => c.startsWith('connect.sid='))
    ?.split(';')[0];
  return { status: answer.status, cookie: set ?? '' };
}

const sessionIdOf = (cookie: string): string =>
  /^s:(.+)\.[^.]+$/.exec(decodeURIComponent(cookie.slice('connect.sid='.length)))![1]!;

describe.each(defaultClientKinds.map((kind) => [kind.name, kind] as const))('on %s', (_, kind) => {
  test('with RedisSessionStore on the same client, an entry is two round trips besides the exchange', async () => {
    const game = await startGame(kind, 'ours');
    await enter(game); // the scripts loaded (a first EVALSHA may be answered NOSCRIPT)
    let landed = { status: 0, cookie: '' };
    const sent = await sentDuring(async () => {
      landed = await enter(game);
    });
    expect(landed.status).toBe(303);
    expect(sent).toEqual(['evalsha', 'evalsha']);
    // What the two left behind: the session with its login, the record, no count on the address.
    const sid = sessionIdOf(landed.cookie);
    const stored = JSON.parse((await raw.get(`sess:${sid}`))!) as {
      platformLogin?: { openId: string };
    };
    expect(stored.platformLogin?.openId).toEqual(expect.any(String));
    expect(await raw.keys(`${game.prefix}w:*`)).toEqual([]);
    expect(await raw.keys(`${game.prefix}t:*`)).toHaveLength(2);
    const me = await fetch(`${game.url}/api/me`, { headers: { cookie: landed.cookie } });
    expect(me.status).toBe(200);
  });

  test('a browser that enters again: its old session is deleted in the same write, and the new id is new', async () => {
    const game = await startGame(kind, 'ours');
    const first = await enter(game);
    const before = await commandCounts(raw);
    const again = await enter(game, first.cookie);
    expect(again.status).toBe(303);
    expect(sessionIdOf(again.cookie)).not.toBe(sessionIdOf(first.cookie));
    expect(await raw.exists(`sess:${sessionIdOf(first.cookie)}`)).toBe(0);
    expect(await raw.exists(`sess:${sessionIdOf(again.cookie)}`)).toBe(1);
    // The session is written once: express-session's save at the request's end sends nothing.
    const after = await commandCounts(raw);
    // Five SETs, all in the two scripts: the code's claim, the address's reservation, the record,
    // its entry in the player's index and the session.
    expect((after.set ?? 0) - (before.set ?? 0)).toBe(5);
    const old = await fetch(`${game.url}/api/me`, { headers: { cookie: first.cookie } });
    expect(old.status).toBe(401);
  });
});

test('with connect-redis, the entry keeps working with its own writes (five round trips)', async () => {
  const game = await startGame(defaultClientKinds[0]!, 'connect-redis');
  await enter(game);
  let landed = { status: 0, cookie: '' };
  const sent = await sentDuring(async () => {
    landed = await enter(game);
  });
  expect(landed.status).toBe(303);
  // regenerate's DEL, and the session written twice: by the entry, and again by express-session
  // at the request's end (a regenerated session is not known to be saved).
  expect(sent).toEqual(['evalsha', 'del', 'evalsha', 'set', 'set']);
  expect(await raw.keys(`${game.prefix}w:*`)).toEqual([]);
  const me = await fetch(`${game.url}/api/me`, { headers: { cookie: landed.cookie } });
  expect(me.status).toBe(200);
});
