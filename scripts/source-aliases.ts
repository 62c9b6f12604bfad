// Preload (`node -r esbuild-register -r scripts/source-aliases.ts …`) for processes a test
// spawns and for `npm run example`: the package's own names resolve to lib/ sources, as in jest's
// moduleNameMapper, so they run the code as it stands and never a stale or missing dist/ build;
// nor do they write dist/, which another process (a second example, the bench) may be loading.
import Module from 'node:module';
import { join } from 'node:path';

const SOURCES: Record<string, string> = {
  'express-platform-login': join(__dirname, '../lib/index.ts'),
  'express-platform-login/simulator': join(__dirname, '../lib/simulator/index.ts'),
  'express-platform-login/testing': join(__dirname, '../lib/testing/index.ts'),
};

type Resolve = (request: string, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolve };
const resolveFilename = loader._resolveFilename;
loader._resolveFilename = (request, ...rest) =>
  resolveFilename.call(Module, SOURCES[request] ?? request, ...rest);
