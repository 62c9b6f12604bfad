// The game page at `/`: the player (never a token), two buttons and a live panel on `GET /ws` that
// says when the login ends elsewhere; or, for a visitor, how to enter from the platform.
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
pre{background:#f5f5f7;padding:1rem;border-radius:.4rem;overflow:auto}pre:empty{display:none}
#live{border:1px solid #ccc;border-radius:.4rem;padding:.6rem 1rem;margin:1rem 0}
#live[data-state=open]{border-color:#2e7d32}#live[data-state=ended]{border-color:#c62828;background:#fdecea}
#live-dot{display:inline-block;width:.6rem;height:.6rem;border-radius:50%;background:#999;margin-right:.5rem}
#live[data-state=open] #live-dot{background:#2e7d32}#live[data-state=ended] #live-dot{background:#c62828}`;

/** A small game controller icon: the page and `/favicon.ico` (no 404 in every page's console). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="2" y="9" width="28" height="15" rx="7" fill="#3949ab"/><path d="M9 13v7M5.5 16.5h7" stroke="#fff" stroke-width="2.4" stroke-linecap="round"/><circle cx="21" cy="15" r="1.8" fill="#fff"/><circle cx="25" cy="18.5" r="1.8" fill="#fff"/></svg>`;

function layout(body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Example game</title><link rel="icon" href="/favicon.ico" type="image/svg+xml"><style>${STYLE}</style></head><body>${body}<script src="/assets/app.js"></script></body></html>`;
}

/** "in 1 h 59 min (at 21:14 UTC)", "expired 3 min ago": when the access token expires, for people. */
export function readableExpiry(expiresAt: number, now = Date.now()): string {
  const at = new Date(expiresAt).toISOString().slice(11, 16);
  const minutes = Math.round(Math.abs(expiresAt - now) / 60_000);
  const span =
    minutes < 1
      ? 'less than a minute'
      : minutes < 60
        ? `${minutes} min`
        : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return expiresAt >= now ? `in ${span} (at ${at} UTC)` : `expired ${span} ago (at ${at} UTC)`;
}

/** The page for a logged-in player; `nickname` from the open API when it answered in time. */
export function playerPage(player: PlatformUser, nickname: string | undefined): string {
  const name = nickname ?? player.openId;
  return layout(`<h1>Welcome, <span id="nickname">${escape(name)}</span></h1>
<dl>
<dt>openId</dt><dd><span id="open-id">${escape(player.openId)}</span></dd>
<dt>unionId</dt><dd id="union-id">${escape(player.unionId ?? '—')}</dd>
<dt>registration</dt><dd id="registration">${escape(player.registration)}</dd>
<dt>scope</dt><dd id="scope">${escape(player.scope.join(', '))}</dd>
<dt>token expires</dt><dd><time id="expires" datetime="${new Date(player.tokenExpiresAt).toISOString()}">${escape(readableExpiry(player.tokenExpiresAt))}</time></dd>
</dl>
<div id="live" data-state="connecting" aria-live="polite"><span id="live-dot"></span><span id="live-text">Connecting the live channel…</span></div>
<p><button id="profile">Call the open API</button> <button id="logout">Log out</button> <button id="logout-everywhere">Log out everywhere</button></p>
<pre id="output" aria-live="polite"></pre>`);
}

/** The page for a visitor without a login. */
export function visitorPage(lobbyUrls: { name: string; url: string }[]): string {
  // The first registration's link keeps its id and words; each other one is `enter-<name>`.
  const links = lobbyUrls
    .map(({ name, url }, index) =>
      index === 0
        ? `<a class="button" id="enter" href="${escape(url)}">Enter from the platform</a>`
        : `<a class="button" id="enter-${escape(name)}" href="${escape(url)}">Enter through ${escape(name)}</a>`,
    )
    .join(' ');
  return layout(`<h1>Example game</h1>
<p id="logged-out">You are not logged in.</p>
<p>${links}</p>`);
}
