// The docs' code runs as pasted: each block marked `<!-- after-quick-start -->` is added to the
// README's quick start (its imports beside the quick start's, the rest at its end) and each block
// marked `<!-- standalone-snippet -->` is a file of its own; all are type-checked with the README's
// tsconfig.json against the built package, as a studio's `npx tsc` would. The open-API paths they
// fetch are routes the simulator answers, and the simulator snippet of docs/testing.md runs.
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startSimulator } from 'express-platform-login/simulator';
import { TSC } from '../helpers/consumer';
import { quickStartCode } from '../helpers/quick-start';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

interface Snippet {
  file: string;
  code: string;
}

/** The marked ```ts blocks of every page of docs/, each named for its page and place. */
function markedSnippets(): Snippet[] {
  const snippets: Snippet[] = [];
  for (const page of readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'))) {
    const markdown = readFileSync(join(root, 'docs', page), 'utf8');
    const marked = /<!-- (after-quick-start|standalone-snippet) -->\s*```ts\n([\s\S]*?)\n```/g;
    let index = 0;
    for (const [, kind, code] of markdown.matchAll(marked)) {
      index += 1;
      const file = `${page.replace(/\.md$/, '')}-${index}.ts`;
      snippets.push({
        file,
        code: kind === 'after-quick-start' ? addedToQuickStart(code!) : code!,
      });
    }
  }
  return snippets;
}

const IMPORT = /^import [\s\S]*?from '[^']+';\n/gm;

/** The quick start with `code` added: its imports after the quick start's, the rest at the end. */
function addedToQuickStart(code: string): string {
  const quickStart = quickStartCode();
  const imports = [...`${code}\n`.matchAll(IMPORT)].map((match) => match[0]).join('');
  const body = `${code}\n`.replace(IMPORT, '');
  const lastImport = [...quickStart.matchAll(IMPORT)].at(-1)!;
  const afterImports = lastImport.index + lastImport[0].length;
  return `${quickStart.slice(0, afterImports)}${imports}${quickStart.slice(afterImports)}\n${body}`;
}

let scratch: string;
let snippets: Snippet[];
beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'index.d.ts'))) {
    throw new Error('dist/ is missing: run `npm run build` first (`npm test` builds first).');
  }
  snippets = markedSnippets();
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const tsconfig = /<!-- quick-start-tsconfig -->\s*```json\n([\s\S]*?)\n```/.exec(readme)![1]!;
  mkdirSync(join(root, '.tmp'), { recursive: true });
  scratch = mkdtempSync(join(root, '.tmp', 'docs-snippets-'));
  writeFileSync(join(scratch, 'tsconfig.json'), tsconfig);
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  mkdirSync(join(scratch, 'node_modules'));
  symlinkSync(root, join(scratch, 'node_modules', 'express-platform-login'), 'dir');
  for (const { file, code } of snippets) writeFileSync(join(scratch, file), code);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test('the pages mark their snippets: operations, sockets, jobs and testing', () => {
  const pages = new Set(snippets.map(({ file }) => file.replace(/-\d+\.ts$/, '')));
  expect([...pages].sort()).toEqual(['jobs', 'operations', 'sockets', 'testing']);
});

test("every marked snippet type-checks with the README's tsconfig.json", async () => {
  const checked = await run(process.execPath, [TSC], { cwd: scratch }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  expect(checked).toBe('');
}, 120_000);

test('the open-API paths the snippets fetch are routes the simulator answers', async () => {
  const paths = new Set(
    snippets.flatMap(({ code }) => [...code.matchAll(/\.fetch\('(\/[^']*)'/g)].map((m) => m[1]!)),
  );
  expect(paths.size).toBeGreaterThan(0);
  const sim = await startSimulator();
  try {
    for (const path of paths) {
      // Without a token: 401 from a route that exists, 404 from one that does not.
      expect([path, (await fetch(`${sim.url}${path}`)).status]).toEqual([path, 401]);
    }
  } finally {
    await sim.close();
  }
});

test("docs/testing.md's simulator snippet runs", async () => {
  const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  const [simulatorSnippet] = snippets.filter(
    ({ file, code }) => file.startsWith('testing-') && code.includes('startSimulator'),
  );
  await expect(
    run(process.execPath, [tsx, simulatorSnippet!.file], { cwd: scratch }),
  ).resolves.toMatchObject({ stderr: '' });
}, 60_000);
