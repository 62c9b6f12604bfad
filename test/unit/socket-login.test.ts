// What a socket's handler holds, SocketLogin: its token and fetch answer only while its login lives
// — not once it ended, not after close() (the socket went), and not past the token record's known
// expiry unless the store, asked then, knows a later one. The context's refresher and open-API
// client are stand-ins that hand out the record's token and answer 200.
import { PlayerContext, type ApiSettings } from '../../lib/http/player-context';
import type { RefreshCoordinator } from '../../lib/core/refresh';
import type { TokenRecord } from '../../lib/core/token-record';
import type { IncomingMessage } from 'node:http';
import { StoreUnavailableError } from '../../lib/errors';
import { PlatformSockets, type SocketsDeps } from '../../lib/sockets/platform-sockets';
import { SocketLogin } from '../../lib/sockets/socket-login';

const record = {
  openId: 'player-ada',
  version: 1,
  accessToken: 'access-1',
  refreshToken: 'refresh-1',
  accessExpiresAt: Date.now() + 3_600_000,
  refreshExpiresAt: Date.now() + 86_400_000,
  scope: [],
  obtainedAt: Date.now(),
} as TokenRecord;

function newLogin(): SocketLogin {
  const refresher = { forRequest: async (_key: string, current: TokenRecord) => current };
  const api = {
    client: {
      resolve: (path: string) => new URL(path, 'http://open-api.invalid'),
      send: async () => new Response('{}', { status: 200 }),
    },
    sessionTtlMs: 86_400_000,
  } as unknown as ApiSettings;
  return new SocketLogin(
    new PlayerContext('s1', record, refresher as unknown as RefreshCoordinator, api),
  );
}

const refused = { error: 'login_required', status: 401 };

test('a live login answers; after close() token() and fetch() reject login_required', async () => {
  const login = newLogin();
  await expect(login.token()).resolves.toBe('access-1');
  expect((await login.fetch('/userinfo')).status).toBe(200);
  login.close();
  await expect(login.token()).rejects.toMatchObject(refused);
  await expect(login.fetch('/userinfo')).rejects.toMatchObject(refused);
});

test('after the login ended (the watch said so) token() and fetch() reject login_required', async () => {
  const login = newLogin();
  login.listener.ended();
  expect(login.ended).toBe(true);
  await expect(login.token()).rejects.toMatchObject(refused);
  await expect(login.fetch('/userinfo')).rejects.toMatchObject(refused);
});

test("past the record's known expiry: refused unless the store, asked then, knows a later one", async () => {
  const login = newLogin();
  let asked = 0;
  /** The expiry the store knows when asked. */
  const store = { expiresAt: undefined as number | undefined };
  login.following(
    () => undefined,
    async () => {
      asked += 1;
      if (store.expiresAt !== undefined) login.listener.expires?.(store.expiresAt);
    },
  );
  login.listener.expires?.(Date.now() - 1); // the timer has not fired yet
  await expect(login.token()).rejects.toMatchObject(refused);
  await expect(login.fetch('/userinfo')).rejects.toMatchObject(refused);
  expect(asked).toBe(2);
  store.expiresAt = Date.now() + 60_000; // a renewal elsewhere moved it
  await expect(login.token()).resolves.toBe('access-1');
  await expect(login.token()).resolves.toBe('access-1');
  expect(asked).toBe(3); // known again: not asked twice
});

test("a session store that fails while a socket's session is read: StoreUnavailableError, never the raw error", async () => {
  const sockets = new PlatformSockets({ isCrossOrigin: () => false } as unknown as SocketsDeps, {
    session: (_req, _res, next) => next(new Error('session store down')),
  });
  const error = await sockets.authenticate({ headers: {} } as IncomingMessage).catch((e) => e);
  expect(error).toBeInstanceOf(StoreUnavailableError);
  expect(error.code).toBe('ERR_PLATFORM_STORE_UNAVAILABLE');
});
