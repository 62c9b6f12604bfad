// A consumer of the built package, as a test needs one: dist/ checked first, and a scratch folder
// with the package installed in it as `npm install` leaves it (node_modules/express-platform-login
// is the checkout: its package.json, exports and dist/).
import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/**
 * A consumer's `tsc`: TypeScript 7, what `npm install -D typescript` installs now. The checkout's
 * `typescript` is TypeScript 6 (`@typescript/typescript6`), for the tools that need the compiler
 * API TypeScript 7 does not ship (typescript-eslint, the language service).
 */
export const TSC = join(root, 'node_modules', '@typescript', 'native', 'bin', 'tsc');

/** TypeScript 6's `tsc`, for a consumer still on a resolution TypeScript 7 removed (node10). */
export const TSC6 = join(root, 'node_modules', 'typescript', 'bin', 'tsc6');

/** Throws, saying what to run, when dist/ is missing. */
export function requireBuild(): void {
  if (!existsSync(join(root, 'dist', 'index.d.ts')))
    throw new Error('dist/ is missing: run `npm run build` first (`npm test` builds first).');
}

/** A new folder under `parent` whose name starts with `prefix`, the package installed in it. */
export function consumerFolder(parent: string, prefix: string): string {
  mkdirSync(parent, { recursive: true });
  const folder = mkdtempSync(join(parent, prefix));
  mkdirSync(join(folder, 'node_modules'));
  symlinkSync(root, join(folder, 'node_modules', 'express-platform-login'), 'dir');
  return folder;
}
