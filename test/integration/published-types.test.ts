// The published types, seen from a consumer: type-check a small app that imports the package by
// name (through package.json `exports`, resolving to the dist/ that `npm test` builds first).
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { consumerFolder, requireBuild, TSC, TSC6 } from '../helpers/consumer';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** Runs `tsc` on a tsconfig; resolves what it printed ('' when the code type-checks). */
function typeCheck(tsconfig: string, cwd = root, tsc = TSC): string {
  try {
    execFileSync(process.execPath, [tsc, '-p', tsconfig], { cwd, stdio: 'pipe' });
    return '';
  } catch (error) {
    return String((error as { stdout?: Buffer }).stdout ?? error);
  }
}

test('a consumer app type-checks against the built package, Request augmentation included', () => {
  requireBuild();
  expect(typeCheck(join('test', 'types', 'tsconfig.json'))).toBe('');
}, 120_000);

// A consumer with `"module": "commonjs"` and TypeScript's default resolution for it: `bundler` on
// TypeScript 7, `node10` (which 7 removed) on TypeScript 6 and 5.
test.each([
  { typescript: '7', tsc: TSC, resolution: {} },
  {
    typescript: '6',
    tsc: TSC6,
    resolution: { moduleResolution: 'node10', ignoreDeprecations: '6.0' },
  },
])(
  "with TypeScript $typescript's CommonJS default resolution, every entry point has types",
  ({ tsc, resolution }) => {
    // An installed copy of the package, as such a consumer would have it.
    const consumer = consumerFolder(tmpdir(), 'epl-consumer-');
    try {
      writeFileSync(
        join(consumer, 'app.ts'),
        [
          "import { platformLogin, type PlatformUser } from 'express-platform-login';",
          "import { startSimulator, DEMO_CLIENT_ID } from 'express-platform-login/simulator';",
          "import { tokenStoreContract } from 'express-platform-login/testing';",
          'const user: PlatformUser | undefined = undefined;',
          'void [platformLogin, startSimulator, DEMO_CLIENT_ID, tokenStoreContract, user];',
        ].join('\n'),
      );
      writeFileSync(
        join(consumer, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'commonjs',
            ...resolution,
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: [],
          },
          files: ['app.ts'],
        }),
      );
      expect(typeCheck('tsconfig.json', consumer, tsc)).toBe('');
    } finally {
      rmSync(consumer, { recursive: true, force: true });
    }
  },
  120_000,
);

test('the published option schemas carry their docs, each ending "Defaults to …"', () => {
  const declarations = (file: string) => readFileSync(join(root, 'dist', file), 'utf8');
  for (const [file, option] of [
    ['options.d.ts', 'sessionMaxAgeSeconds'],
    ['core/refresh-options.d.ts', 'skewSeconds'],
    ['client/token-client-options.d.ts', 'timeoutMs'],
    ['stores/redis-store-options.d.ts', 'operationTimeoutMs'],
    ['core/memory-store-options.d.ts', 'maxEntries'],
  ] as const) {
    // The TSDoc block right above the field of the schema's shape, which the option types point at.
    const docBeforeOption = new RegExp(
      `/\\*\\*(?:(?!\\*/)[\\s\\S])*Defaults to[^*]*\\*/\\s*${option}:`,
    );
    expect(declarations(file)).toMatch(docBeforeOption);
  }
});

test("in a consumer's editor, hovering an option shows its doc, nested groups included", () => {
  const consumer = consumerFolder(tmpdir(), 'epl-hover-');
  try {
    const app = join(consumer, 'app.ts');
    const source = [
      "import { platformLogin, PlatformTokenClient } from 'express-platform-login';",
      'platformLogin({',
      "  authUrl: 'https://auth.example', clientId: 'c', clientSecret: 's',",
      "  redirectUri: 'https://game.example/cb', sessionMaxAgeSeconds: 3600,",
      '  refresh: { skewSeconds: 30 }, entry: { context: { allowMissingHeaders: true } },',
      '});',
      "new PlatformTokenClient({ authUrl: 'https://auth.example', clientId: 'c', clientSecret: 's', redirectUri: 'https://game.example/cb', refreshRetries: 1 });",
      "const middlewareOptions: Parameters<ReturnType<typeof platformLogin>['middleware']>[0] = { optional: true };",
      'void middlewareOptions;',
    ].join('\n');
    writeFileSync(app, source);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiler API, loaded only here
    const ts = require('typescript') as typeof import('typescript');
    const service = ts.createLanguageService({
      getScriptFileNames: () => [app],
      getScriptVersion: () => '1',
      getScriptSnapshot: (file) =>
        ts.sys.fileExists(file) ? ts.ScriptSnapshot.fromString(ts.sys.readFile(file)!) : undefined,
      getCurrentDirectory: () => consumer,
      getCompilationSettings: () => ({
        strict: true,
        module: ts.ModuleKind.CommonJS,
        moduleResolution: ts.ModuleResolutionKind.Node10,
        target: ts.ScriptTarget.ES2022,
        types: [],
      }),
      getDefaultLibFileName: (options) => ts.getDefaultLibFilePath(options),
      fileExists: ts.sys.fileExists,
      readFile: ts.sys.readFile,
      readDirectory: ts.sys.readDirectory,
    });
    const hover = (name: string, from = 0): string => {
      const info = service.getQuickInfoAtPosition(app, source.indexOf(name, from));
      return ts.displayPartsToString(info?.documentation);
    };
    expect(hover('authUrl')).toMatch(/token service.*Required\./s);
    expect(hover('sessionMaxAgeSeconds')).toMatch(/Defaults to `86400`\./);
    expect(hover('skewSeconds')).toMatch(/Defaults to `60`\./);
    expect(hover('allowMissingHeaders')).toMatch(/Defaults to `false`\./);
    expect(hover('refreshRetries')).toMatch(/Defaults to `2`\./);
    expect(hover('optional')).toMatch(/Defaults to `false`\./);
  } finally {
    rmSync(consumer, { recursive: true, force: true });
  }
}, 120_000);
