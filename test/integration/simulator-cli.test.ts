// The command-line entry as a user runs it: it starts, prints its URL, answers, and exits on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { freePort } from '../helpers/free-port';
import { REDIRECT_URI, exchange, refresh } from '../helpers/simulator-requests';

const ROOT = path.resolve(__dirname, '../..');
const CLI = ['-r', 'esbuild-register', 'lib/simulator/cli.ts'];

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [...CLI, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  return { child, output: () => output, exited };
}

/** Resolves with the first match of `pattern` in the output, or rejects if the process exits first. */
async function waitFor(process_: Run, pattern: RegExp): Promise<RegExpMatchArray> {
  for (let i = 0; i < 150; i += 1) {
    const match = pattern.exec(process_.output());
    if (match) return match;
    if (process_.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no ${pattern} in the output:\n${process_.output()}`);
}

let running: Run | undefined;

/** Runs the CLI on a free port with `flags`; resolves its address once it listens. */
async function startCli(flags: string[]): Promise<{ url: string }> {
  const port = await freePort();
  running = run(['--port', String(port), ...flags]);
  await waitFor(running, /Lobby/);
  return { url: `http://127.0.0.1:${port}` };
}

/** A code the CLI's /enter issued for REDIRECT_URI (`query`: the player, the client). */
async function enteredCode(cli: { url: string }, query: Record<string, string> = {}) {
  const params = new URLSearchParams({ redirect_uri: REDIRECT_URI, ...query });
  const entry = await fetch(`${cli.url}/enter?${params}`, { redirect: 'manual' });
  return new URL(entry.headers.get('location')!).searchParams.get('code')!;
}

/** {@link startCli}, and a code its /enter issued. */
async function startWithCode(flags: string[]): Promise<{ cli: { url: string }; code: string }> {
  const cli = await startCli(flags);
  return { cli, code: await enteredCode(cli) };
}

afterEach(async () => {
  if (running && running.child.exitCode === null && running.child.signalCode === null) {
    running.child.kill('SIGKILL');
    await running.exited;
  }
  running = undefined;
});

test('starts on --port, prints the lobby URL, answers, and exits cleanly on SIGTERM', async () => {
  const port = await freePort();
  running = run([
    '--port',
    String(port),
    '--redirect-uri',
    'http://127.0.0.1:3000/platform/callback',
  ]);
  const [url] = await waitFor(running, /http:\/\/127\.0\.0\.1:\d+\/(?=\s)/);
  expect(url).toBe(`http://127.0.0.1:${port}/`);

  const lobby = await fetch(url);
  expect(lobby.status).toBe(200);
  expect(await lobby.text()).toContain('Enter game');
  const entry = await fetch(`${url}enter?open_id=player-bo`, { redirect: 'manual' });
  expect(entry.headers.get('location')).toMatch(
    /^http:\/\/127\.0\.0\.1:3000\/platform\/callback\?code=/,
  );

  running.child.kill('SIGTERM');
  const [code, signal] = await running.exited;
  expect({ code, signal }).toEqual({ code: 0, signal: null });
});

test('--rotate and --access-token-lifetime reach the token endpoint', async () => {
  const { cli, code } = await startWithCode(['--rotate', '--access-token-lifetime', '60']);
  const token = (await exchange(cli, code)).body;
  expect(token.expires_in).toBe(60);
  const refreshed = (await refresh(cli, token.refresh_token)).body;
  expect(refreshed.refresh_token).not.toBe(token.refresh_token);
});

test('--help prints the usage and exits 0', async () => {
  running = run(['--help']);
  const [code] = await running.exited;
  expect(code).toBe(0);
  expect(running.output()).toContain('Usage: express-platform-login-simulator');
  expect(running.output()).toContain('--redirect-uri');
});

test('a wrong flag or value exits 1 with a message', async () => {
  running = run(['--port', 'many']);
  const [code] = await running.exited;
  expect(code).toBe(1);
  expect(running.output()).toContain('--port must be a whole number');
});

test('--answer-style envelope: tokens inside data, numbers as strings; a used code as error_code', async () => {
  const { cli, code } = await startWithCode(['--answer-style', 'envelope']);
  const first = await exchange(cli, code);
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({
    data: { expires_in: '7200', refresh_expires_in: '7776000', error_code: '0' },
    message: 'success',
  });
  const again = await exchange(cli, code);
  expect([again.status, again.body.data]).toEqual([
    200,
    { error_code: 10007, description: 'authorization code was already used' },
  ]);
});

test('--answer-style with an unknown style exits 1 naming the styles', async () => {
  running = run(['--answer-style', 'xml']);
  const [code] = await running.exited;
  expect(code).toBe(1);
  expect(running.output()).toContain('--answer-style must be one of oauth, errcode, envelope');
});

test('--client, once per registration: each exchanges its own codes; the second one gives its own open_id and the same unionid', async () => {
  const cli = await startCli([
    '--client',
    'web-game:web-secret',
    '--client',
    'mini-game:mini-secret',
  ]);
  expect(running!.output()).toContain('Clients: web-game, mini-game');
  const codeOf = (clientId: string) =>
    enteredCode(cli, { open_id: 'player-ada', client_id: clientId });
  const web = await exchange(cli, await codeOf('web-game'), {
    client_id: 'web-game',
    client_secret: 'web-secret',
  });
  const mini = await exchange(cli, await codeOf('mini-game'), {
    client_id: 'mini-game',
    client_secret: 'mini-secret',
  });
  expect([web.status, web.body.open_id]).toEqual([200, 'player-ada']);
  expect([mini.status, mini.body.open_id]).toEqual([200, 'mini-game.player-ada']);
  expect(mini.body.unionid).toBe(web.body.unionid);
  // The demo client is not registered beside them.
  expect((await exchange(cli, await codeOf('web-game'))).status).toBe(401);
});

test('--client without a secret exits 1 saying its form', async () => {
  running = run(['--client', 'web-game']);
  const [code] = await running.exited;
  expect(code).toBe(1);
  expect(running.output()).toContain(
    '--client must be <client_id>:<client_secret>, got "web-game"',
  );
});
