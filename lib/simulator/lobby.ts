// The lobby: GET / lists the players, each with an "Enter game" button that goes to GET /enter,
// which issues a code and redirects the browser to `redirect_uri?code=…` as the platform does.
import type { RequestHandler } from 'express';
import { entryLocation, resolveEntry } from './player-entry';
import { escapeHtml } from '../util/escape-html';
import { sendBody } from './write-response';
import type { SimulatorState } from './platform-state';

// Self-contained page: inline styles only, no scripts, nothing loaded from elsewhere.
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  // The browser's default, stated: an entry then carries the lobby's origin as its Referer (no path,
  // so no code), which is what a game checking its entry context (`platformOrigins`) looks for.
  'Referrer-Policy': 'strict-origin-when-cross-origin',
};

const STYLE = `
body{margin:0;font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1d2330}
main{max-width:40rem;margin:3rem auto;padding:0 1rem}
h1{font-size:1.5rem;margin:0 0 .5rem}
p{margin:.5rem 0 1.5rem;color:#4a5263}
code{font:.875em ui-monospace,monospace;background:#e8eaef;padding:.1em .3em;border-radius:3px;word-break:break-all}
ul{list-style:none;margin:0;padding:0}
li{display:flex;align-items:center;justify-content:space-between;gap:1rem;background:#fff;border-radius:8px;padding:1rem;margin-bottom:.75rem;box-shadow:0 1px 2px #0002}
li span{display:block;font-size:.875rem;color:#4a5263}
button{font:inherit;border:0;border-radius:6px;padding:.5rem 1rem;background:#2f6fed;color:#fff;cursor:pointer}
button:disabled{background:#9aa3b5;cursor:not-allowed}
.notice{background:#fff4d6;border-radius:8px;padding:.75rem 1rem}
.error{background:#fde2e1}
footer{margin-top:2rem;font-size:.875rem;color:#4a5263}`;

function page(title: string, content: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main>${content}</main></body></html>`
  );
}

/** A query parameter as one string; repeated or absent: undefined. */
function single(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function hidden(name: string, value: string | undefined): string {
  return value === undefined
    ? ''
    : `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
}

/** What the lobby says above the players, and whether its buttons can work. */
function lobbyNotice(entry: ReturnType<typeof resolveEntry>): { notice: string; ready: boolean } {
  if (typeof entry === 'string') {
    return {
      notice: `<p class="notice error">Cannot enter: ${escapeHtml(entry)}.</p>`,
      ready: false,
    };
  }
  if (entry.redirectUri === undefined) {
    return {
      notice:
        '<p class="notice">No game to enter yet: open this page with ' +
        '<code>?redirect_uri=https://your-game/callback</code>, or start the simulator with ' +
        '<code>--redirect-uri</code>.</p>',
      ready: false,
    };
  }
  return {
    notice:
      '<p>Pick a player and enter the game. The platform sends your browser to ' +
      `<code>${escapeHtml(entry.redirectUri)}</code> with a fresh <code>?code=</code>.</p>`,
    ready: true,
  };
}

/** The handler of GET /: the lobby page. */
export function lobbyPage(state: SimulatorState): RequestHandler {
  const { players } = state.config;
  // The player descriptions never change: rendered once.
  const who = players.map(
    (player) =>
      `<div><strong>${escapeHtml(player.nickname)}</strong>` +
      `<span>open_id <code>${escapeHtml(player.openId)}</code>` +
      (player.unionId === undefined
        ? ''
        : ` · unionid <code>${escapeHtml(player.unionId)}</code>`) +
      `</span><span>scope ${escapeHtml(player.scope.join(', ') || '(none)')}</span></div>`,
  );

  return (req, res) => {
    const redirectParam = single(req.query, 'redirect_uri');
    const clientParam = single(req.query, 'client_id');
    const entry = resolveEntry(state, { clientId: clientParam, redirectUri: redirectParam });
    const { notice, ready } = lobbyNotice(entry);
    const disabled = ready ? '' : ' disabled';
    const rows = players.map(
      (player, index) =>
        `<li>${who[index]}<form method="get" action="/enter">` +
        hidden('open_id', player.openId) +
        hidden('redirect_uri', redirectParam) +
        hidden('client_id', clientParam) +
        `<button type="submit"${disabled}>Enter game</button></form></li>`,
    );
    const footer =
      typeof entry === 'string'
        ? ''
        : `<footer>Client <code>${escapeHtml(entry.clientId)}</code> · token endpoint ` +
          `<code>POST /token</code> · open API <code>GET /userinfo</code></footer>`;
    const html = page(
      'Platform lobby',
      `<h1>Platform lobby</h1>${notice}<ul>${rows.join('')}</ul>${footer}`,
    );
    sendBody(res, 200, 'text/html;charset=UTF-8', html, PAGE_HEADERS);
  };
}

/** The handler of GET /enter: issues a code and redirects to `redirect_uri?code=…`. */
export function enterGame(state: SimulatorState): RequestHandler {
  return (req, res) => {
    const entry = resolveEntry(state, {
      openId: single(req.query, 'open_id'),
      clientId: single(req.query, 'client_id'),
      redirectUri: single(req.query, 'redirect_uri'),
    });
    if (typeof entry === 'string' || entry.redirectUri === undefined) {
      const problem =
        typeof entry === 'string'
          ? entry
          : 'no redirect_uri: add ?redirect_uri= to the lobby URL or start the simulator with one';
      const html = page(
        'Cannot enter the game',
        `<h1>Cannot enter the game</h1><p class="notice error">${escapeHtml(problem)}</p>` +
          '<p><a href="/">Back to the lobby</a></p>',
      );
      sendBody(res, 400, 'text/html;charset=UTF-8', html, PAGE_HEADERS);
      return;
    }
    const code = state.issueCode(entry.clientId, entry.openId, entry.redirectUri);
    sendBody(res, 302, 'text/plain;charset=UTF-8', '', {
      Location: entryLocation(entry.redirectUri, code),
      'Referrer-Policy': PAGE_HEADERS['Referrer-Policy'],
    });
  };
}
