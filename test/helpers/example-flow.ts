// The example's whole browser flow over HTTP, as a browser without scripts makes it: the game page,
// the simulator's lobby, Enter game, the entry, /api/me, /api/profile, logout, and /api/me again.
// One cookie jar for every host; redirects read, not followed.

/** What each step answered, for one `toEqual`. */
export interface ExampleFlow {
  lobby: number;
  enter: number;
  entry: number;
  game: number;
  me: { status: number; openId?: unknown };
  profile: { status: number; nickname?: unknown };
  logout: number;
  afterLogout: number;
}

const unescapeHtml = (text: string): string =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) =>
    name === 'amp' ? '&' : name === 'lt' ? '<' : name === 'gt' ? '>' : name === 'quot' ? '"' : "'",
  );

/**
 * Runs the flow on the example at `exampleUrl` (its embedded simulator's lobby); the first player,
 * through the visitor page's link `linkId` (`enter`: the first registration's).
 */
export async function exampleFlow(exampleUrl: string, linkId = 'enter'): Promise<ExampleFlow> {
  const cookies = new Map<string, string>();
  const browse = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (cookies.size > 0) {
      headers.set('Cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    }
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(name);
      else cookies.set(name, value);
    }
    return res;
  };
  const json = { Accept: 'application/json' };
  const page = (path: string) => new URL(path, exampleUrl).href;

  const visitor = await (await browse(page('/'))).text();
  const lobbyUrl = unescapeHtml(new RegExp(`id="${linkId}" href="([^"]+)"`).exec(visitor)![1]!);
  const lobby = await browse(lobbyUrl);
  const form = /<form method="get" action="([^"]+)">(.*?)<\/form>/.exec(await lobby.text())!;
  const enterUrl = new URL(unescapeHtml(form[1]!), lobbyUrl);
  for (const input of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    enterUrl.searchParams.set(input[1]!, unescapeHtml(input[2]!));
  }
  const enter = await browse(enterUrl.href);
  // The lobby's navigation to the game, with the headers a browser sends for it.
  const entry = await browse(enter.headers.get('location')!, {
    headers: {
      Referer: `${new URL(lobbyUrl).origin}/`,
      'Sec-Fetch-Site': 'cross-site',
      'Sec-Fetch-Mode': 'navigate',
      'Sec-Fetch-Dest': 'document',
    },
  });
  const game = await browse(page('/'));
  const me = await browse(page('/api/me'), { headers: json });
  const profile = await browse(page('/api/profile'), { headers: json });
  const logout = await browse(page('/logout'), { method: 'POST', headers: json });
  const afterLogout = await browse(page('/api/me'), { headers: json });
  return {
    lobby: lobby.status,
    enter: enter.status,
    entry: entry.status,
    game: game.status,
    me: { status: me.status, openId: ((await me.json()) as { openId?: unknown }).openId },
    profile: {
      status: profile.status,
      nickname: ((await profile.json()) as { nickname?: unknown }).nickname,
    },
    logout: logout.status,
    afterLogout: afterLogout.status,
  };
}

/** What the flow answers on an example that works: the lobby's first player, Ada. */
export const WHOLE_FLOW: ExampleFlow = {
  lobby: 200,
  enter: 302,
  entry: 303,
  game: 200,
  me: { status: 200, openId: 'player-ada' },
  profile: { status: 200, nickname: 'Ada' },
  logout: 204,
  afterLogout: 401,
};
