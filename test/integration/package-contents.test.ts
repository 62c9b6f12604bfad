// What `npm pack` ships (the built package, its types, the license and the documents the README
// links to, nothing else), and that an installed copy loads through both require() and import().
// Reads the dist/ that `npm test` builds first.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** The paths `npm pack` would put in the tarball, without running the build again. */
function packedFiles(): string[] {
  const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [pack] = JSON.parse(output) as [{ files: { path: string }[] }];
  return pack.files.map((file) => file.path);
}

let files: string[];
beforeAll(() => {
  files = packedFiles();
  if (!files.includes('dist/index.js')) {
    throw new Error('dist/ is missing: run `npm run build` first (`npm test` builds first).');
  }
}, 60_000);

test('the tarball has the build, its types, the license and the documents', () => {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  expect(files).toEqual(
    expect.arrayContaining([
      'package.json',
      'README.md',
      'LICENSE',
      'SECURITY.md',
      'CHANGELOG.md',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/simulator/index.js',
      'dist/simulator/index.d.ts',
      'dist/simulator/cli.js',
      ...docs,
    ]),
  );
});

test('the tarball has nothing else: no sources, tests, scratch files or screenshots', () => {
  const top = ['package.json', 'README.md', 'LICENSE', 'SECURITY.md', 'CHANGELOG.md'];
  const stray = files.filter(
    (path) => !top.includes(path) && !path.startsWith('dist/') && !/^docs\/[^/]+\.md$/.test(path),
  );
  expect(stray).toEqual([]);
});

test('every shipped source map carries the sources it maps to', () => {
  const maps = files.filter((path) => path.endsWith('.js.map'));
  expect(maps.length).toBeGreaterThan(0);
  const incomplete = maps.filter((path) => {
    const map = JSON.parse(readFileSync(join(root, path), 'utf8')) as {
      sources: string[];
      sourcesContent?: (string | null)[];
    };
    return (
      map.sourcesContent?.length !== map.sources.length ||
      map.sourcesContent.some((content) => typeof content !== 'string' || content === '')
    );
  });
  expect(incomplete).toEqual([]);
});

test('an installed copy loads through require() and import(), both entry points', () => {
  // An installed copy as a consumer has it (npm links a git or file dependency the same way).
  const consumer = mkdtempSync(join(tmpdir(), 'epl-consumer-'));
  try {
    mkdirSync(join(consumer, 'node_modules'));
    symlinkSync(root, join(consumer, 'node_modules', 'express-platform-login'), 'dir');
    const required = execFileSync(
      process.execPath,
      [
        '-e',
        "const m = require('express-platform-login');" +
          "const s = require('express-platform-login/simulator');" +
          'console.log(typeof m.platformLogin, typeof m.RedisTokenStore, typeof s.startSimulator)',
      ],
      { cwd: consumer, encoding: 'utf8' },
    );
    expect(required.trim()).toBe('function function function');
    const imported = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { platformLogin, LoginRequiredError } from 'express-platform-login';" +
          "import { startSimulator } from 'express-platform-login/simulator';" +
          'console.log(typeof platformLogin, new LoginRequiredError().status, typeof startSimulator)',
      ],
      { cwd: consumer, encoding: 'utf8' },
    );
    expect(imported.trim()).toBe('function 401 function');
  } finally {
    rmSync(consumer, { recursive: true, force: true });
  }
}, 30_000);
