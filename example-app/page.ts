// The game page at `/`: the player (never a token) and two buttons, or how to enter from the platform.
import type { PlatformUser } from 'express-platform-login';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const STYLE = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.6rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.4rem 1rem}dt{color:#666}
button,a.button{font:inherit;padding:.5rem 1rem;border-radius:.4rem;border:1px solid #888;background:#f5f5f7;cursor:pointer;text-decoration:none;color:inherit}
pre{background:#f5f5f7;padding:1rem;border-radius:.4rem;overflow:auto;min-height:1rem}`;

function layout(body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Example game</title><style>${STYLE}</style></head><body>${body}<script src="/assets/app.js"></script></body></html>`;
}

/** The page for a logged-in player. */
export function playerPage(player: PlatformUser): string {
  return layout(`<h1>Welcome, <span id="open-id">${escape(player.openId)}</span></h1>
<dl>
<dt>openId</dt><dd>${escape(player.openId)}</dd>
<dt>unionId</dt><dd id="union-id">${escape(player.unionId ?? '—')}</dd>
<dt>scope</dt><dd id="scope">${escape(player.scope.join(', '))}</dd>
<dt>token expires</dt><dd id="expires">${escape(new Date(player.tokenExpiresAt).toISOString())}</dd>
</dl>
<p><button id="profile">Call the open API</button> <button id="logout">Log out</button></p>
<pre id="output" aria-live="polite"></pre>`);
}

/** The page for a visitor without a login. */
export function visitorPage(lobbyUrl: string): string {
  return layout(`<h1>Example game</h1>
<p id="logged-out">You are not logged in.</p>
<p><a class="button" id="enter" href="${escape(lobbyUrl)}">Enter from the platform</a></p>`);
}
