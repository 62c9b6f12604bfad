// docs/testing.md's recipe runs as pasted: its jest.config.json, app.ts and app.test.ts are written
// to a scratch folder and run by Jest in a process of its own, the package resolved from the built
// dist/ (as an installed copy is), the tools from this checkout's node_modules. The recipe's test
// passes, and the package prints nothing (no warning: its origins are configured). Then the types
// are checked with the README's tsconfig.json. (The npm-install path with TypeScript 7 is the
// quick-start test's; this one catches a recipe that no longer runs.)
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { consumerFolder, requireBuild, TSC } from '../helpers/consumer';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

/** The fenced block of `language` after `<!-- marker -->` in `markdown`. */
function block(markdown: string, marker: string, language: string): string {
  const match = new RegExp(`<!-- ${marker} -->\\s*\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\``).exec(
    markdown,
  );
  if (!match) throw new Error(`no \`\`\`${language} block after <!-- ${marker} -->`);
  return match[1]!;
}

let scratch: string;
beforeAll(() => {
  requireBuild();
  const docs = readFileSync(join(root, 'docs', 'testing.md'), 'utf8');
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  // Inside the checkout, so Node and Jest find the tools in its node_modules by walking up.
  scratch = consumerFolder(join(root, '.tmp'), 'testing-recipe-');
  writeFileSync(join(scratch, 'jest.config.json'), block(docs, 'testing-jest-config', 'json'));
  writeFileSync(join(scratch, 'app.ts'), block(docs, 'testing-app', 'ts'));
  writeFileSync(join(scratch, 'app.test.ts'), block(docs, 'testing-test', 'ts'));
  writeFileSync(join(scratch, 'tsconfig.json'), block(readme, 'quick-start-tsconfig', 'json'));
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ type: 'module', private: true }));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The environment without Jest's own variables, so the inner Jest is a run of its own. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('JEST_') && name !== 'NODE_OPTIONS' && name !== 'DEBUG') env[name] = value;
  }
  return env;
}

test('the recipe passes with Jest on @swc/jest, and the package prints nothing', async () => {
  const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
  const { stdout, stderr } = await run(process.execPath, [jest, '--ci', '--colors=false'], {
    cwd: scratch,
    env: cleanEnv(),
  });
  const output = `${stdout}\n${stderr}`;
  expect(output).toMatch(/Tests: +1 passed, 1 total/);
  expect(output).not.toContain('[express-platform-login]');
  expect(output).not.toMatch(/console\.(warn|error|log)/);
}, 60_000);

test("the recipe's types check with the README's tsconfig.json", async () => {
  await expect(run(process.execPath, [TSC], { cwd: scratch, env: cleanEnv() })).resolves.toEqual({
    stdout: '',
    stderr: '',
  });
}, 60_000);
