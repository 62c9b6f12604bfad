// The published types, seen from a consumer: type-check a small app that imports the package by
// name (through package.json `exports`, resolving to the dist/ that `npm test` builds first).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** Runs tsc on a tsconfig; resolves what it printed ('' when the code type-checks). */
function typeCheck(tsconfig: string, cwd = root): string {
  try {
    execFileSync(process.execPath, [tsc, '-p', tsconfig], { cwd, stdio: 'pipe' });
    return '';
  } catch (error) {
    return String((error as { stdout?: Buffer }).stdout ?? error);
  }
}

test('a consumer app type-checks against the built package, Request augmentation included', () => {
  if (!existsSync(join(root, 'dist', 'index.d.ts'))) {
    throw new Error(
      'dist/ is missing: run `npm run build` first (`npm test` builds before it tests).',
    );
  }
  expect(typeCheck(join('test', 'types', 'tsconfig.json'))).toBe('');
}, 120_000);

test("with TypeScript's CommonJS default resolution (node10), both entry points have types", () => {
  // An installed copy of the package, as a consumer with `"module": "commonjs"` would have it.
  const consumer = mkdtempSync(join(tmpdir(), 'epl-consumer-'));
  try {
    mkdirSync(join(consumer, 'node_modules'));
    symlinkSync(root, join(consumer, 'node_modules', 'express-platform-login'), 'dir');
    writeFileSync(
      join(consumer, 'app.ts'),
      [
        "import { platformLogin, type PlatformUser } from 'express-platform-login';",
        "import { startSimulator, DEMO_CLIENT_ID } from 'express-platform-login/simulator';",
        'const user: PlatformUser | undefined = undefined;',
        'void [platformLogin, startSimulator, DEMO_CLIENT_ID, user];',
      ].join('\n'),
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'commonjs',
          moduleResolution: 'node10',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['app.ts'],
      }),
    );
    expect(typeCheck('tsconfig.json', consumer)).toBe('');
  } finally {
    rmSync(consumer, { recursive: true, force: true });
  }
}, 120_000);
