/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

// TypeScript is transformed by swc (fast, no type checking); `npm run typecheck` checks the types.
const transform: Config['transform'] = { '^.+\\.ts$': ['@swc/jest', {}] };
const moduleNameMapper = {
  '^express-platform-login$': '<rootDir>/lib/index.ts',
  '^express-platform-login/simulator$': '<rootDir>/lib/simulator/index.ts',
  '^express-platform-login/testing$': '<rootDir>/lib/testing/index.ts',
};

// Scratch space and build output hold copies of package.json and of the sources.
const modulePathIgnorePatterns = ['<rootDir>/.tmp/', '<rootDir>/dist/'];

// Each thing is tested once (issue 42 item 6). What runs where:
//
// - unit: test/unit, in-process, no Redis (MemoryTokenStore runs the store contract here).
// - integration: every behaviour suite, once, on the default client (ioredis 5) and Express 5;
//   also the suites that run every client kind themselves (describe.each over redis-clients.ts):
//   the command seam and its key tracking (redis-seam, redis-seam-topologies), the start-up checks
//   on each client (setup-checks-clients), and ioredis 6's RESP3 reply mapping (test/ioredis6).
// - ioredis6, node-redis, node-redis5: the Redis store suites again, with the store on another
//   client kind (ioredis 6 RESP3, node-redis 6 RESP3, node-redis 5 RESP2; storeClientKind() in
//   test/helpers/redis-clients.ts reads EPL_TEST_REDIS_CLIENT): the store contract standalone,
//   through Sentinel and on Cluster, the keys and lifetimes, the store's faults, its hygiene and the
//   record cache. Nothing above the store runs here.
// - express4: the Express-version-specific surface on Express 4 (test/express4: the path spellings
//   the router matches at the entry, mounting the callback and logout, one whole login through
//   Express 4's request and response).
//
// Runs these projects no longer make, and what covers each. Before: 126 file runs (unit 31,
// integration 51, express4 11, ioredis6 15, node-redis 9, node-redis5 9); after it 102 (unit 31,
// integration 52, express4 1, ioredis6/node-redis/node-redis5 6 each). Round 4 added suites of
// its own (failover, cluster-cache, entry-round-trips, example-topologies, failover-bed and a few
// unit files): unit 39, integration 58.
// - express4 ran callback, middleware, example-app, request-accessors, entry-trust, entry-context,
//   entry-failures, login-ended, open-api-fetch and route-needs again on Express 4. Their
//   behaviour sits above Express and runs once in integration; what depends on the Express major
//   is in test/express4/express-version.test.ts (the spellings and logout mounting of entry-trust,
//   a whole login as callback/middleware/request-accessors do it), request-accessors' "another copy
//   of Express" test (the accessors on Express 4's request prototype while the package imports
//   Express 5), and quick-start's "a new game on ioredis + Express 4" (the README app, installed).
// - ioredis6 ran example-app, multi-process, startup-checks, login-ended, sockets, jobs and
//   faults-redis with `ioredis` mapped to ioredis 6. Above the store they do not depend on the
//   client; what does is the store on that client, which the ioredis6 project still runs (store
//   contract, faults, hygiene, record cache, Cluster, Sentinel), plus redis-seam (commands, scripts,
//   tracking and its faults per kind), setup-checks-clients (CONFIG GET per kind) and
//   test/ioredis6 (RESP3 reply mapping, connect-redis 8.1 on ioredis 6). Its ioredis6.test.ts no
//   longer runs the contract on the default `legacy` mapping: that is the ioredis 6 client kind.
// - node-redis and node-redis5 ran sockets, jobs and faults-redis on node-redis. Sockets and jobs
//   use the store's changes, player index and deletePlayer: the contract's `changes` and
//   player-index parts per kind, and redis-seam's key tracking per kind. faults-redis's outages:
//   redis-store-faults per kind and redis-seam's fault tests per kind.
// - The encrypted contract runs once per topology on ioredis 5 (encryption is above the command
//   seam); the contract in the clear runs on every kind.
/** Projects that use Redis: one redis-server per worker (global-setup.ts, worker-redis.ts). */
const withRedis = {
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
};
const WORKER_REDIS = '<rootDir>/test/helpers/worker-redis.ts';

/** The Redis store suites, run once per client kind. */
const STORE_SUITES =
  '<rootDir>/test/integration/{redis-store,redis-store-faults,redis-store-hygiene,record-cache,redis-cluster-store,redis-sentinel-store}.test.ts';

const config: Config = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      transform,
      moduleNameMapper,
      modulePathIgnorePatterns,
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      testMatch: [
        '<rootDir>/test/integration/**/*.test.ts',
        '<rootDir>/test/ioredis6/**/*.test.ts',
      ],
      transform,
      moduleNameMapper,
      setupFiles: [WORKER_REDIS],
      modulePathIgnorePatterns,
      ...withRedis,
    },
    {
      // Express 4 (the package supports 4.21+ and 5): `express` is mapped to the `express4` alias
      // (npm:express@^4) for the package and the test app alike.
      displayName: 'express4',
      testEnvironment: 'node',
      // The Express-version surface, the mount check (Express's mount event on either line), and
      // that nothing shared with the app changes (Express's own prototypes on either line).
      testMatch: [
        '<rootDir>/test/express4/**/*.test.ts',
        '<rootDir>/test/integration/mistakes-logged.test.ts',
        '<rootDir>/test/integration/shared-objects.test.ts',
      ],
      transform,
      moduleNameMapper: {
        '^express$': '<rootDir>/node_modules/express4',
        '^express/(.*)$': '<rootDir>/node_modules/express4/$1',
        ...moduleNameMapper,
      },
      modulePathIgnorePatterns,
    },
    // The store suites with the store on each other client kind (see storeClientKind()).
    ...(
      [
        ['ioredis6', 'use-ioredis6.ts'],
        ['node-redis', 'use-node-redis.ts'],
        ['node-redis5', 'use-node-redis5.ts'],
      ] as const
    ).map(([displayName, setup]) => ({
      displayName,
      testEnvironment: 'node',
      testMatch: [STORE_SUITES],
      transform,
      moduleNameMapper,
      setupFiles: [WORKER_REDIS, `<rootDir>/test/helpers/${setup}`],
      modulePathIgnorePatterns,
      ...withRedis,
    })),
  ],
  // The suite mostly waits (on Redis, child processes, timers): on 2 cores Jest's default of one
  // worker (cores - 1) leaves the CPU idle most of the time. Two workers, each on its own
  // redis-server (global-setup.ts), use it; three starved the tests that hold a 250 ms lease on a
  // loaded 2-core machine. `--maxWorkers=N` on the command line overrides.
  maxWorkers: 2,
  testTimeout: 30_000,
};

export default config;
