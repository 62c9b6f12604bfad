// A new user's path, as the README writes it: `npm pack` of this checkout, a scratch game folder
// outside the repository, the README's install lines (the tarball's path put in), `npm pkg set
// type=module`, its tsconfig.json, then the quick start saved as server.ts, type-checked with tsc and
// run with tsx against the simulator and a real Redis. Twice: on node-redis + Express 5 (the quick
// start as it stands) and on ioredis + Express 4 (with the changes its "On ioredis" section names),
// sessions on RedisSessionStore both times. So the README cannot drift from what works.
// Needs the built dist/ (`npm test` builds first) and the npm registry or npm's cache.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { freePort } from '../helpers/free-port';

const root = join(__dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const run = promisify(execFile);

/** The fenced block of `language` that follows `<!-- marker -->` in the README. */
function readmeBlock(marker: string, language: string): string {
  const match = new RegExp(`<!-- ${marker} -->\\s*\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\``).exec(
    readme,
  );
  if (!match) throw new Error(`README.md has no \`\`\`${language} block after <!-- ${marker} -->`);
  return match[1]!;
}

/** The README's environment table: variable name → its value "with the simulator" (or ''). */
function environmentTable(): Map<string, string> {
  const rows = new Map<string, string>();
  const table = /\| variable +\| what it is +\| with the simulator +\|\n([\s\S]*?)\n\n/.exec(
    readme,
  );
  if (!table) throw new Error("README.md has no environment table ('variable | what it is | …')");
  for (const line of table[1]!.split('\n').slice(1)) {
    const [nameCell = '', , valueCell = ''] = line.split('|').slice(1);
    // One row may explain two variables: `A`, `B` | … | `a`, `b`.
    const names = [...nameCell.matchAll(/`([A-Z_]+)`/g)].map((match) => match[1]!);
    const values = [...valueCell.matchAll(/`([^`]*)`/g)].map((match) => match[1]!);
    names.forEach((name, index) => rows.set(name, values[index] ?? ''));
  }
  return rows;
}

const quickStart = readmeBlock('quick-start', 'ts');
const install = readmeBlock('install', 'sh').split('\n');

/**
 * The quick start on ioredis, changed as "On ioredis" says: its `import` replaces the `redis` one,
 * its other lines replace those from `createClient(` to `await redis.connect()`.
 */
function ioredisQuickStart(): string {
  const block = readmeBlock('quick-start-ioredis', 'ts').split('\n');
  const imports = block.filter((line) => line.startsWith('import '));
  const client = block
    .filter((line) => !line.startsWith('import '))
    .join('\n')
    .trim();
  const redisImport = /^import .* from 'redis';$/m;
  const nodeRedisClient = /^const redis = createClient\([\s\S]*?^await redis\.connect\(\);$/m;
  expect(quickStart).toMatch(redisImport);
  expect(quickStart).toMatch(nodeRedisClient);
  return quickStart.replace(redisImport, imports.join('\n')).replace(nodeRedisClient, client);
}

/** A variant of the new user's path: what is installed and what server.ts says. */
interface Variant {
  name: string;
  /** The README's `npm install …` lines. */
  installLines: string[];
  code: string;
}

const variants: Variant[] = [
  {
    name: 'redis (node-redis) + Express 5: the quick start as written',
    installLines: install,
    code: quickStart,
  },
  {
    name: 'ioredis + Express 4: as "On ioredis" says',
    installLines: [
      // "Express 4 instead of 5: `express@4` in the install line".
      readmeBlock('install-ioredis', 'sh').replace(/ express /, ' express@4 '),
      install[1]!,
    ],
    code: ioredisQuickStart(),
  },
];

/** This checkout as `npm pack` makes it, from the dist/ that `npm test` built (no second build). */
async function packThisCheckout(into: string): Promise<string> {
  if (!existsSync(join(root, 'dist', 'index.d.ts'))) {
    throw new Error('dist/ is missing: run `npm run build` first (`npm test` builds first).');
  }
  const { stdout } = await run(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', into],
    { cwd: root, env: cleanEnv() },
  );
  const [packed] = JSON.parse(stdout) as [{ filename: string }];
  return join(into, packed.filename);
}

/** The environment without what npm or Jest set for this run (npm reads `npm_config_*` as its config). */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('npm_') && name !== 'NODE_OPTIONS' && !name.startsWith('JEST_')) {
      env[name] = value;
    }
  }
  return { ...env, ...extra };
}

/** `npm install …` as the README writes it, with the tarball's real path; npm's cache first. */
function installArgs(line: string, tarball: string): string[] {
  const words = line.trim().split(/\s+/);
  expect(words.slice(0, 2)).toEqual(['npm', 'install']);
  return [
    ...words.slice(1).map((word) => (word.endsWith('.tgz') ? tarball : word)),
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
  ];
}

/** The simulator behind a pass-through proxy that notes every token it hands out. */
interface RecordingPlatform {
  url: string;
  tokens: Set<string>;
  /** Stops answering at all: the platform is unreachable from then on. */
  close(): Promise<void>;
}

async function recordingPlatform(sim: PlatformSimulator): Promise<RecordingPlatform> {
  const tokens = new Set<string>();
  const server: Server = createServer((req, res) => {
    const upstream = request(
      new URL(req.url!, sim.url),
      { method: req.method, headers: req.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          if (req.url?.startsWith('/token')) {
            const fields = JSON.parse(body.toString()) as Record<string, unknown>;
            for (const name of ['access_token', 'refresh_token']) {
              if (typeof fields[name] === 'string') tokens.add(fields[name]);
            }
          }
          res.writeHead(answer.statusCode!, answer.headers).end(body);
        });
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections(); // the app's keep-alive connections too
      await closed;
    },
  };
}

/** A started `npx tsx server.ts`, with what it printed so far. */
interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startQuickStart(folder: string, env: NodeJS.ProcessEnv): Started {
  // `npx tsx server.ts`, without npx's extra process: tsx's own bin, on this Node.
  const tsx = realpathSync(join(folder, 'node_modules', '.bin', 'tsx'));
  const child = spawn(process.execPath, [tsx, 'server.ts'], {
    cwd: folder,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: tsx runs the script in a child of its own
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([status]) => status as number | null);
  return { child, output: () => output, exited };
}

async function stop(started: Started | undefined): Promise<void> {
  if (!started || started.child.exitCode !== null || started.child.signalCode !== null) return;
  process.kill(-started.child.pid!, 'SIGTERM');
  const timer = setTimeout(() => process.kill(-started.child.pid!, 'SIGKILL'), 5000);
  await started.exited;
  clearTimeout(timer);
}

/** How `started` exited, or 'still running after …' when it has not within `ms`. */
async function exitStatusWithin(started: Started, ms: number): Promise<number | null | string> {
  let timer: NodeJS.Timeout | undefined;
  const status = await Promise.race([
    started.exited,
    new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`still running after ${ms / 1000} s`), ms);
    }),
  ]);
  clearTimeout(timer);
  return status;
}

/** Started with `env`, the game exits 1 within 30 s, its output saying each of `says`, never "Game on". */
async function expectStopsAtStart(
  folder: string,
  env: NodeJS.ProcessEnv,
  says: string[],
): Promise<void> {
  const started = startQuickStart(folder, env);
  try {
    expect(await exitStatusWithin(started, 30_000)).toBe(1);
    for (const text of says) expect(started.output()).toContain(text);
    expect(started.output()).not.toContain('Game on');
  } finally {
    await stop(started);
  }
}

async function waitForOutput(started: Started, pattern: RegExp, ms: number): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const match = pattern.exec(started.output());
    if (match) return match[1] ?? match[0];
    if (started.child.exitCode !== null) {
      throw new Error(
        `the quick start exited with ${started.child.exitCode}:\n${started.output()}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(`the quick start printed no ${pattern} in ${ms} ms:\n${started.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('every environment variable the quick start reads is explained in the table after it', () => {
  const read = new Set(
    [...quickStart.matchAll(/process\.env\.([A-Z_]+)|required\('([A-Z_]+)'\)/g)].map(
      (match) => match[1] ?? match[2]!,
    ),
  );
  expect(read.size).toBeGreaterThan(0);
  expect([...read].filter((name) => !environmentTable().has(name))).toEqual([]);
});

test('the install section offers only what works: no registry name alone, no `install-scripts approve` to run', () => {
  expect(install[0]).toMatch(/^npm install \S+\.tgz /);
  expect(readme).not.toMatch(/^npm install express-platform-login\b/m);
  expect(readme).not.toMatch(/^npm install-scripts approve/m);
  expect(readme).toContain('npm pkg set type=module');
});

/** `npm pack` once for both variants, into a folder of its own. */
let packed: { dir: string; tarball: Promise<string> } | undefined;

/**
 * A scratch game folder as the README makes it: `npm init`, `type=module`, the variant's install
 * lines with the tarball's path, its tsconfig.json and server.ts.
 */
async function newGameFolder({ installLines, code }: Variant): Promise<string> {
  if (!packed) {
    const dir = mkdtempSync(join(tmpdir(), 'epl-pack-'));
    packed = { dir, tarball: packThisCheckout(dir) };
  }
  const tarball = await packed.tarball;
  const folder = mkdtempSync(join(tmpdir(), 'epl-new-game-'));
  const inFolder = { cwd: folder, env: cleanEnv() };
  await run('npm', ['init', '-y'], inFolder);
  await run('npm', ['pkg', 'set', 'type=module'], inFolder);
  for (const line of installLines) await run('npm', installArgs(line, tarball), inFolder);
  writeFileSync(join(folder, 'tsconfig.json'), readmeBlock('quick-start-tsconfig', 'json'));
  writeFileSync(join(folder, 'server.ts'), code);
  return folder;
}

/**
 * Every variant's folder, all made from the first variant's start, so the second installs while
 * the first's tests run. Each is awaited by its own variant's tests.
 */
let folders: Array<Promise<string>> | undefined;
const folderOf = (variant: Variant): Promise<string> => {
  folders ??= variants.map((each) => {
    const made = newGameFolder(each);
    made.catch(() => undefined); // awaited (and reported) by that variant's beforeAll
    return made;
  });
  return folders[variants.indexOf(variant)]!;
};

afterAll(async () => {
  // Every folder made, whether its tests ran or not (`-t` may select only the other variant's).
  for (const made of await Promise.allSettled(folders ?? []))
    if (made.status === 'fulfilled') rmSync(made.value, { recursive: true, force: true });
  if (packed) rmSync(packed.dir, { recursive: true, force: true });
}, 300_000);

describe.each(variants)('a new game on $name', (variant) => {
  const { code } = variant;
  let folder: string;
  let sim: PlatformSimulator;
  let platform: RecordingPlatform;
  let redis: Redis;
  let app: Started | undefined;
  let url: string;
  let port: number;
  const sessionSecret = randomBytes(32).toString('base64');
  const env = (): NodeJS.ProcessEnv => {
    const table = environmentTable();
    return {
      NODE_ENV: 'development',
      PORT: String(port),
      PLATFORM_AUTH_URL: platform.url,
      // The lobby's pages: entries come from the simulator (its Referer), not through the proxy.
      PLATFORM_ORIGINS: new URL(sim.url).origin,
      // The demo credentials exactly as the README's table gives them.
      PLATFORM_CLIENT_ID: table.get('PLATFORM_CLIENT_ID'),
      PLATFORM_CLIENT_SECRET: table.get('PLATFORM_CLIENT_SECRET'),
      REDIS_URL: process.env.REDIS_URL,
      SESSION_SECRET: sessionSecret,
      TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    };
  };

  beforeAll(async () => {
    folder = await folderOf(variant);
    sim = await startSimulator();
    platform = await recordingPlatform(sim);
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    port = await freePort();
  }, 300_000);

  afterAll(async () => {
    await stop(app);
    redis?.disconnect();
    await platform?.close();
    await sim?.close();
  });

  test("server.ts type-checks with the README's tsconfig.json (`npx tsc`)", async () => {
    // Handlers need no `!` on the package's request members (docs/handlers.md).
    expect(code.match(/req\.platform\w*!/g) ?? []).toEqual([]);
    const tsc = join(folder, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc], { cwd: folder, env: cleanEnv() }).then(
      () => '',
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    );
    expect(checked).toBe('');
  }, 120_000);

  test('`npx tsx server.ts` starts: "Game on" with the address', async () => {
    app = startQuickStart(folder, env());
    url = await waitForOutput(app, /Game on (http:\/\/localhost:\d+)\//, 30_000);
    expect(url).toBe(`http://localhost:${port}`);
  }, 40_000);

  test('enter from the simulator, /api/me, /api/profile, logout; Redis holds no token in the clear', async () => {
    const entered = await fetch(
      sim.enterUrl({ openId: 'player-bo', redirectUri: `${url}/platform/callback` }),
      { redirect: 'manual' },
    );
    expect(entered.status).toBe(302);
    const callback = await fetch(entered.headers.get('location')!, {
      redirect: 'manual',
      headers: { Referer: `${sim.url}/` },
    });
    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/');
    const cookie = callback.headers.getSetCookie()[0]!.split(';')[0]!;

    const landing = await fetch(`${url}/`, { headers: { cookie } });
    expect(landing.status).toBe(200);
    const me = await fetch(`${url}/api/me`, { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ openId: 'player-bo', unionId: 'union-bo' });
    const profile = await fetch(`${url}/api/profile`, { headers: { cookie } });
    expect(profile.status).toBe(200);
    expect(await profile.json()).toMatchObject({ open_id: 'player-bo', nickname: 'Bo' });
    expect(sim.calls.userinfo).toBe(1);

    // Sessions and tokens are in Redis, the tokens encrypted with TOKEN_ENCRYPTION_KEY.
    expect(platform.tokens.size).toBe(2);
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ count: 1000 })) keys.push(...(batch as string[]));
    const sessionId = /^connect\.sid=s%3A([^.]+)\./.exec(cookie)![1]!;
    expect(keys).toContain(`sess:${sessionId}`);
    const values = await Promise.all(
      keys.map((key) => redis.getBuffer(key).catch(() => null)), // other types: not ours
    );
    const everything = Buffer.concat(values.map((value) => value ?? Buffer.alloc(0)));
    for (const token of platform.tokens) expect(everything.includes(token)).toBe(false);

    const logout = await fetch(`${url}/logout`, { method: 'POST', headers: { cookie } });
    expect(logout.status).toBe(204);
    const after = await fetch(`${url}/api/me`, {
      headers: { cookie, accept: 'application/json' },
    });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ error: 'login_required' });
  });

  test('without a login, the API answers 401 login_required and never calls the platform', async () => {
    const calls = { ...sim.calls };
    const res = await fetch(`${url}/api/profile`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'login_required' });
    expect(sim.calls).toEqual(calls);
  });

  // Each a process of its own beside the running game, waiting for its start or its exit: side by side.
  describe('other copies started beside it', () => {
    test.concurrent(
      'a second copy on the same port says the port is taken and exits, never "Game on"',
      async () => {
        await expectStopsAtStart(folder, env(), [`Cannot listen on port ${port}`, 'EADDRINUSE']);
      },
      40_000,
    );

    test.concurrent(
      'with NODE_ENV=production a weak SESSION_SECRET stops it at start (checkSetup), never "Game on"',
      async () => {
        const weak = { ...env(), NODE_ENV: 'production', SESSION_SECRET: 'x' };
        await expectStopsAtStart(folder, weak, ['An express-session `secret` is weak']);
      },
      40_000,
    );

    test.concurrent(
      'with NODE_ENV=production: no warning at start, and the entry through the TLS proxy sets a Secure, SameSite=Lax cookie',
      async () => {
        const productionPort = await freePort();
        const production = startQuickStart(folder, {
          ...env(),
          NODE_ENV: 'production',
          PORT: String(productionPort),
        });
        try {
          const base = await waitForOutput(
            production,
            /Game on (http:\/\/localhost:\d+)\//,
            30_000,
          );
          expect(production.output()).not.toContain('[express-platform-login]');
          const entered = await fetch(
            sim.enterUrl({ openId: 'player-bo', redirectUri: `${base}/platform/callback` }),
            { redirect: 'manual' },
          );
          const callback = await fetch(entered.headers.get('location')!, {
            redirect: 'manual',
            headers: { Referer: `${sim.url}/`, 'X-Forwarded-Proto': 'https' },
          });
          expect(callback.status).toBe(303);
          expect(callback.headers.getSetCookie()[0]).toMatch(
            /^connect\.sid=[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
          );
        } finally {
          await stop(production);
        }
      },
      40_000,
    );
  });

  test('the platform unreachable: /api/profile fails with a 5xx and the game keeps running', async () => {
    const entered = await fetch(
      sim.enterUrl({ openId: 'player-ada', redirectUri: `${url}/platform/callback` }),
      { redirect: 'manual' },
    );
    const callback = await fetch(entered.headers.get('location')!, {
      redirect: 'manual',
      headers: { Referer: `${sim.url}/` },
    });
    expect(callback.status).toBe(303);
    const cookie = callback.headers.getSetCookie()[0]!.split(';')[0]!;

    await platform.close();
    const profile = await fetch(`${url}/api/profile`, { headers: { cookie } });
    expect(profile.status).toBeGreaterThanOrEqual(500);
    // Still up (an async handler's rejection would have ended the process on Express 4).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(app!.child.exitCode).toBeNull();
    const me = await fetch(`${url}/api/me`, { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ openId: 'player-ada' });
  });
});
