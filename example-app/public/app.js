// The game page's buttons: the browser only ever sees the player's public fields; tokens stay on the server.
/* global document, window, fetch */
const output = document.getElementById('output');
document.getElementById('profile')?.addEventListener('click', async () => {
  const res = await fetch('/api/profile', { headers: { Accept: 'application/json' } });
  output.textContent = `${res.status}\n${JSON.stringify(await res.json(), null, 2)}`;
});
document.getElementById('logout')?.addEventListener('click', async () => {
  await fetch('/logout', { method: 'POST', headers: { Accept: 'application/json' } });
  window.location.assign('/');
});
