// The game page's buttons and live panel: the browser only ever sees the player's public fields;
// tokens stay on the server. The live panel is a WebSocket on /ws (the same session cookie): it says
// when the login ends anywhere (closed with 4401) and offers the way back.
/* global document, window, fetch, WebSocket, setTimeout */
const output = document.getElementById('output');
document.getElementById('profile')?.addEventListener('click', async () => {
  const res = await fetch('/api/profile', { headers: { Accept: 'application/json' } });
  output.textContent = `${res.status}\n${JSON.stringify(await res.json(), null, 2)}`;
});
// A logout the server could not complete (503 while Redis is away) leaves the login alive: say so
// rather than reload into a page that still shows the player.
async function logOut(path) {
  const res = await fetch(path, { method: 'POST', headers: { Accept: 'application/json' } }).catch(
    () => undefined,
  );
  if (res?.ok) {
    window.location.assign('/');
    return;
  }
  const answer = res
    ? `${res.status} ${(await res.json().catch(() => ({}))).error ?? ''}\n`
    : 'The server did not answer.\n';
  output.textContent = `${answer}The logout did not go through: you are still logged in. Try again in a moment.`;
}
document.getElementById('logout')?.addEventListener('click', () => logOut('/logout'));
document
  .getElementById('logout-everywhere')
  ?.addEventListener('click', () => logOut('/api/logout-everywhere'));

const live = document.getElementById('live');
const liveText = document.getElementById('live-text');

function show(state, text) {
  live.dataset.state = state;
  liveText.textContent = text;
}

function connect() {
  const ws = new WebSocket(`${window.location.origin.replace(/^http/, 'ws')}/ws`);
  ws.addEventListener('message', (event) => {
    const frame = JSON.parse(event.data);
    if (frame.type === 'hello')
      show('open', 'Live: the server will tell this page when your login ends.');
  });
  ws.addEventListener('close', async (event) => {
    // Refused at the upgrade (401) shows in a browser as a plain 1006: ask the API whether the login lives.
    const ended =
      event.code === 4401 ||
      (await fetch('/api/me', { headers: { Accept: 'application/json' } }).then(
        (res) => res.status === 401,
        () => false,
      ));
    if (ended) {
      show('ended', 'Your login ended (logged out here or elsewhere). ');
      const back = document.createElement('a');
      back.href = '/';
      back.id = 'live-reenter';
      back.textContent = 'Enter again';
      liveText.append(back);
      document.getElementById('profile').disabled = true;
    } else {
      // A restart or a network blip: try again in a moment.
      show('connecting', 'Live channel lost; reconnecting…');
      setTimeout(connect, 2000);
    }
  });
}
if (live) connect();
