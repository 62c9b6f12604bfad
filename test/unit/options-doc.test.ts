// docs/options.md against the options schema (lib/options.ts), both ways: every option the schema
// takes is documented, and every option the page documents is one the schema takes, so neither
// can drift from the other (issue #42 item 2).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { platformLoginSchema } from '../../lib/options';

type Schema = z.ZodType;
/** The object schema inside wrappers (optional, default, prefault). */
function objectShape(schema: Schema): Record<string, Schema> | undefined {
  let current = schema as Schema & { def: { innerType?: Schema }; shape?: Record<string, Schema> };
  for (let depth = 0; depth < 5 && current.shape === undefined; depth += 1) {
    const inner = current.def.innerType;
    if (inner === undefined) return undefined;
    current = inner as typeof current;
  }
  return current.shape;
}

/** `authUrl`, …, and the groups' members as `refresh.skewSeconds`, …; `tokenClient` has its own section. */
function optionPaths(): string[] {
  const paths: string[] = [];
  for (const [name, schema] of Object.entries(platformLoginSchema.shape)) {
    const group = ['refresh', 'entry', 'api'].includes(name) ? objectShape(schema) : undefined;
    if (group === undefined) paths.push(name);
    else for (const member of Object.keys(group)) paths.push(`${name}.${member}`);
  }
  return paths;
}

const page = readFileSync(join(__dirname, '../../docs/options.md'), 'utf8');
/** The first cell of each table row of the `platformLogin(options)` section, split at commas. */
const documented = page
  .slice(page.indexOf('## `platformLogin(options)`'), page.indexOf('## Wrong options'))
  .split('\n')
  .filter((line) => line.startsWith('| `'))
  .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));

test('every option of platformLogin() is in docs/options.md', () => {
  const missing = optionPaths().filter((path) => !documented.includes(path));
  expect(missing).toEqual([]);
});

test('every option docs/options.md lists is one platformLogin() takes', () => {
  const groups = ['refresh', 'entry', 'api'];
  const known = new Set([...optionPaths(), ...groups]);
  expect(documented.filter((path) => !known.has(path))).toEqual([]);
});
