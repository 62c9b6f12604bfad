// Preload for the app processes (`node -r esbuild-register -r bench/lib/built-package.ts …`): the
// package runs from its build, dist/ (what `npm install` gives a studio), not from lib/ sources.
// Both the example's imports by name and the bench app's relative imports of lib/ land on dist/,
// so one copy of each module runs. Source runs through esbuild-register would measure esbuild's
// export getters (a call per use of an imported name, 2–3 µs per request in a profile), which tsc's
// output does not have. `npm run bench` builds first; a missing build is a clear error here.
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
