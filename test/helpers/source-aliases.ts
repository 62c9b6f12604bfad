// Preload (`node -r esbuild-register -r test/helpers/source-aliases.ts …`) for processes a test
// spawns: the package's own names resolve to lib/ sources, as in jest's moduleNameMapper, so a
// test runs the code under test and never a stale or missing dist/ build (and, under the ioredis6
// project, `ioredis` resolves to ioredis 6).
import Module from 'node:module';
import { join } from 'node:path';

const SOURCES: Record<string, string> = {
  'express-platform-login': join(__dirname, '../../lib/index.ts'),
  'express-platform-login/simulator': join(__dirname, '../../lib/simulator/index.ts'),
  // Under the `ioredis6` Jest project (test/helpers/use-ioredis6.ts), as its moduleNameMapper does.
  ...(process.env.EPL_TEST_IOREDIS === '6'
    ? { ioredis: join(__dirname, '../../node_modules/ioredis6') }
    : {}),
};

type Resolve = (request: string, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolve };
const resolveFilename = loader._resolveFilename;
loader._resolveFilename = (request, ...rest) =>
  resolveFilename.call(Module, SOURCES[request] ?? request, ...rest);
