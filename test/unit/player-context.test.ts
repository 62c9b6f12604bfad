// PlayerContext.fetch: a 401 from the open API asks for one refresh of the record whose token was
// sent, even when a socket's watch handed the context a newer record while the call was out (then
// the coordinator answers with that newer record and the platform is not called again).
import type { RefreshCoordinator } from '../../lib/core/refresh';
import type { TokenRecord } from '../../lib/core/token-record';
import { PlayerContext, type ApiSettings } from '../../lib/http/player-context';
import type { OpenApiClient } from '../../lib/open-api/open-api-client';

const recordAt = (version: number): TokenRecord => ({
  accessToken: `access-v${version}`,
  refreshToken: `refresh-v${version}`,
  accessExpiresAt: Date.now() + 3_600_000,
  refreshExpiresAt: Date.now() + 86_400_000,
  openId: 'player-ada',
  scope: ['profile'],
  version,
  obtainedAt: Date.now(),
});

test('a 401 refreshes the record whose token was sent, not the newer one a watch handed over meanwhile', async () => {
  const v1 = recordAt(1);
  const v2 = recordAt(2);
  const seenByRefresh: number[] = [];
  const refresher = {
    forRequest: async (_key: string, record: TokenRecord) => record,
    refresh: async (_key: string, seen: TokenRecord) => {
      seenByRefresh.push(seen.version);
      return v2; // the record another process wrote
    },
  } as unknown as RefreshCoordinator;
  const sentTokens: string[] = [];
  const holder: { context?: PlayerContext } = {};
  const client = {
    resolve: (path: string) => new URL(path, 'http://api.example'),
    send: async (_url: URL, _init: unknown, token: string) => {
      sentTokens.push(token);
      if (sentTokens.length === 1) {
        // While the first call is out, the socket's watch reads the newer record.
        holder.context!.renewed(v2);
        return new Response('{}', { status: 401 });
      }
      return new Response('{"ok":true}', { status: 200 });
    },
  } as unknown as OpenApiClient;
  const api: ApiSettings = { client, sessionTtlMs: 86_400_000, firstRegistration: 'default' };
  const context = new PlayerContext('session-key', v1, refresher, api);
  holder.context = context;

  const answer = await context.fetch('/userinfo');

  expect(answer.status).toBe(200);
  expect(seenByRefresh).toEqual([1]);
  expect(sentTokens).toEqual(['access-v1', 'access-v2']);
});
