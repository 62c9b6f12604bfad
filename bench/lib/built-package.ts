// Preload for the app processes (`node -r esbuild-register -r bench/lib/built-package.ts …`): the
// package runs from its build, dist/, as `npm install` gives it, for the example's imports by name
// and the bench apps' relative imports of lib/ alike: esbuild-register's export getters would add
// a call per use of an imported name, which tsc's output does not have.
import { existsSync } from 'node:fs';
import Module from 'node:module';
import { join, relative, sep } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const LIB = join(ROOT, 'lib') + sep;
const DIST = join(ROOT, 'dist');

if (!existsSync(join(DIST, 'index.js'))) {
  throw new Error(
    'bench: dist/ is missing: run `npm run build` (npm run bench does) before the benchmarks.',
  );
}

const NAMES: Record<string, string> = {
  'express-platform-login': join(DIST, 'index.js'),
  'express-platform-login/simulator': join(DIST, 'simulator', 'index.js'),
  'express-platform-login/testing': join(DIST, 'testing', 'index.js'),
};

type Resolve = (request: string, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolve };
const resolveFilename = loader._resolveFilename;
loader._resolveFilename = (request, ...rest) => {
  const resolved = resolveFilename.call(Module, NAMES[request] ?? request, ...rest);
  if (!resolved.startsWith(LIB) || !resolved.endsWith('.ts')) return resolved;
  const built = join(DIST, relative(LIB, resolved)).replace(/\.ts$/, '.js');
  if (!existsSync(built)) throw new Error(`bench: ${built} is missing: run \`npm run build\`.`);
  return built;
};
