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
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      transform,
      moduleNameMapper,
      modulePathIgnorePatterns,
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
    },
    {
      // The same flows on Express 4 (the package supports 4.21+ and 5): `express` is mapped to the
      // `express4` alias (npm:express@^4) for the package and the test app alike.
      displayName: 'express4',
      testEnvironment: 'node',
      testMatch: [
        '<rootDir>/test/express4/**/*.test.ts',
        '<rootDir>/test/integration/{callback,middleware,example-app,request-accessors,entry-trust,entry-context,entry-failures,login-ended,open-api-fetch,route-needs,mistakes-logged}.test.ts',
      ],
      transform,
      moduleNameMapper: {
        '^express$': '<rootDir>/node_modules/express4',
        '^express/(.*)$': '<rootDir>/node_modules/express4/$1',
        ...moduleNameMapper,
      },
      modulePathIgnorePatterns,
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
    },
    {
      // The Redis flows on ioredis 6 (the peer range is `^5.4 || ^6`; 6 speaks RESP3 by default):
      // `ioredis` is mapped to the `ioredis6` alias (npm:ioredis@^6) for the package, connect-redis's
      // client and the tests alike; processes a test spawns get it through source-aliases.ts.
      displayName: 'ioredis6',
      testEnvironment: 'node',
      testMatch: [
        '<rootDir>/test/ioredis6/**/*.test.ts',
        '<rootDir>/test/integration/{redis-*,record-cache,faults-redis,multi-process,example-app,startup-checks,login-ended,sockets,jobs}.test.ts',
      ],
      transform,
      moduleNameMapper: {
        '^ioredis$': '<rootDir>/node_modules/ioredis6',
        '^ioredis/(.*)$': '<rootDir>/node_modules/ioredis6/$1',
        ...moduleNameMapper,
      },
      // The seam suites run every client kind themselves.
      testPathIgnorePatterns: ['/node_modules/', 'redis-seam'],
      setupFiles: ['<rootDir>/test/helpers/use-ioredis6.ts'],
      modulePathIgnorePatterns,
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
    },
    // The Redis store suites with their stores on node-redis (6, RESP3; and 5, RESP2): the same
    // tests as on ioredis, through the same command seam (storeClientKind() in redis-clients.ts).
    ...(
      [
        ['node-redis', 'use-node-redis.ts'],
        ['node-redis5', 'use-node-redis5.ts'],
      ] as const
    ).map(([displayName, setup]) => ({
      displayName,
      testEnvironment: 'node',
      testMatch: [
        '<rootDir>/test/integration/{redis-store,redis-store-faults,redis-store-hygiene,record-cache,faults-redis,redis-cluster-store,redis-sentinel-store,sockets,jobs}.test.ts',
      ],
      transform,
      moduleNameMapper,
      setupFiles: [`<rootDir>/test/helpers/${setup}`],
      modulePathIgnorePatterns,
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
    })),
  ],
  testTimeout: 30_000,
};

export default config;
