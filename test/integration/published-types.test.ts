// The published types, seen from a consumer: type-check a small app that imports the package by
// name (through package.json `exports`, resolving to the dist/ that `npm test` builds first).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

test('a consumer app type-checks against the built package, Request augmentation included', () => {
  if (!existsSync(join(root, 'dist', 'index.d.ts'))) {
    throw new Error(
      'dist/ is missing: run `npm run build` first (`npm test` builds before it tests).',
    );
  }
  let output = '';
  try {
    execFileSync(process.execPath, [tsc, '-p', join('test', 'types', 'tsconfig.json')], {
      cwd: root,
      stdio: 'pipe',
    });
  } catch (error) {
    output = String((error as { stdout?: Buffer }).stdout ?? error);
  }
  expect(output).toBe('');
}, 60_000);
