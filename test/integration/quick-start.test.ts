// The README's quick start, as a newcomer runs it: the code block after `<!-- quick-start -->` is
// type-checked with the repository's strict tsconfig and started as a real process against the
// simulator and a real Redis, with the environment the README's table explains. So the README
// cannot drift from the code.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisTokenStore } from 'express-platform-login';
import { startSimulator, type PlatformSimulator } from 'express-platform-login/simulator';
import { freePort } from '../helpers/free-port';
import { storedRecord } from '../helpers/records';

const root = join(__dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** The TypeScript block that follows the `<!-- quick-start -->` marker. */
function quickStartCode(): string {
  const match = /<!-- quick-start -->\s*```ts\n([\s\S]*?)\n```/.exec(readme);
  if (!match) throw new Error('README.md has no ```ts block after <!-- quick-start -->');
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

/** The scratch app imports the built package: dist/ must exist. */
function requireBuild(): void {
  if (!existsSync(join(root, 'dist', 'index.d.ts'))) {
    throw new Error('dist/ is missing: run `npm run build` first (`npm test` builds first).');
  }
}

const code = quickStartCode();
// Inside the repository, so the scratch app resolves express, ioredis… from its node_modules and
// `express-platform-login` by package self-reference (package.json `exports` → the built dist/).
const scratch = join(root, '.tmp', `quick-start-${process.pid}`);

beforeAll(() => {
  mkdirSync(scratch, { recursive: true });
  writeFileSync(join(scratch, 'server.ts'), code);
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

test('every environment variable the quick start reads is explained in the table after it', () => {
  const read = new Set(
    [...code.matchAll(/process\.env\.([A-Z_]+)|required\('([A-Z_]+)'\)/g)].map(
      (match) => match[1] ?? match[2]!,
    ),
  );
  expect(read.size).toBeGreaterThan(0);
  expect([...read].filter((name) => !environmentTable().has(name))).toEqual([]);
});

test("the quick start type-checks under the repository's strict tsconfig", () => {
  requireBuild();
  // Handlers need no `!` on the package's request members (docs/handlers.md).
  expect(code.match(/req\.platform\w*!/g) ?? []).toEqual([]);
  writeFileSync(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../tsconfig.json',
      // The package as a consumer gets it: the built declarations (baseUrl is the repository's root).
      compilerOptions: {
        noEmit: true,
        types: ['node'],
        paths: { 'express-platform-login': ['dist/index.d.ts'] },
      },
      include: [],
      files: ['server.ts'],
    }),
  );
  let output = '';
  try {
    execFileSync(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
      { cwd: scratch, stdio: 'pipe' },
    );
  } catch (error) {
    output = String((error as { stdout?: Buffer }).stdout ?? error);
  }
  expect(output).toBe('');
}, 120_000);

describe('the quick start, running against the simulator and Redis', () => {
  let sim: PlatformSimulator;
  let app: ChildProcess | undefined;
  let url: string;
  let redis: Redis;
  const tokenKey = randomBytes(32).toString('base64');

  beforeAll(async () => {
    requireBuild();
    const env = environmentTable();
    const port = await freePort();
    sim = await startSimulator();
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    app = spawn(process.execPath, ['-r', 'esbuild-register', 'server.ts'], {
      cwd: scratch,
      env: {
        ...process.env,
        NODE_ENV: 'development',
        PORT: String(port),
        PLATFORM_AUTH_URL: sim.url,
        // The demo credentials exactly as the README's table gives them.
        PLATFORM_CLIENT_ID: env.get('PLATFORM_CLIENT_ID'),
        PLATFORM_CLIENT_SECRET: env.get('PLATFORM_CLIENT_SECRET'),
        REDIS_URL: process.env.REDIS_URL,
        SESSION_SECRET: randomBytes(32).toString('base64'),
        TOKEN_ENCRYPTION_KEY: tokenKey,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await new Promise<string>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`not started in 20 s:\n${output}`)), 20_000);
      const collect = (chunk: Buffer): void => {
        output += chunk.toString();
        const started = /Game on (http:\/\/localhost:\d+)\//.exec(output);
        if (started) {
          clearTimeout(timer);
          resolve(started[1]!);
        }
      };
      app!.stdout!.on('data', collect);
      app!.stderr!.on('data', collect);
      app!.once('exit', (status) => {
        clearTimeout(timer);
        reject(new Error(`the quick start exited with ${status}:\n${output}`));
      });
    });
  }, 60_000);

  afterAll(async () => {
    if (app && app.exitCode === null) {
      const exited = new Promise((resolve) => app!.once('exit', resolve));
      app.kill('SIGTERM');
      await exited;
    }
    redis?.disconnect();
    await sim?.close();
  });

  test('enter from the simulator, /api/me, /api/profile, logout', async () => {
    // The lobby's "Enter game" (and the README's curl line): the simulator redirects with a code.
    const redirectUri = `${url}/platform/callback`;
    const entered = await fetch(
      `${sim.url}/enter?open_id=player-bo&redirect_uri=${encodeURIComponent(redirectUri)}`,
      { redirect: 'manual' },
    );
    expect(entered.status).toBe(302);
    const callback = await fetch(entered.headers.get('location')!, { redirect: 'manual' });
    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/');
    const cookie = callback.headers.getSetCookie()[0]!.split(';')[0]!;
    const sessionId = /^connect\.sid=s%3A([^.]+)\./.exec(cookie)![1]!;

    // The landing page exists (no "Cannot GET /").
    const landing = await fetch(`${url}/`, { headers: { cookie } });
    expect(landing.status).toBe(200);

    const me = await fetch(`${url}/api/me`, { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ openId: 'player-bo', unionId: 'union-bo' });

    const profile = await fetch(`${url}/api/profile`, { headers: { cookie } });
    expect(profile.status).toBe(200);
    expect(await profile.json()).toMatchObject({ open_id: 'player-bo', nickname: 'Bo' });
    expect(sim.calls.userinfo).toBe(1);

    // The tokens are in Redis, encrypted with TOKEN_ENCRYPTION_KEY: unreadable without it.
    const withKey = new RedisTokenStore({ redis, encryptionKeys: [{ id: 'k1', key: tokenKey }] });
    expect(await storedRecord(withKey, sessionId)).toMatchObject({ openId: 'player-bo' });
    expect(await storedRecord(new RedisTokenStore({ redis }), sessionId)).toBeUndefined();

    const logout = await fetch(`${url}/logout`, { method: 'POST', headers: { cookie } });
    expect(logout.status).toBe(204);
    expect(await storedRecord(withKey, sessionId)).toBeUndefined();
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
});
