// docs/errors.md lists every code of the error table with its class, status, body `error` and log level: the
// table in lib/errors.ts is the source, and this test keeps the page in step with it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  LoginRequiredError,
  PLATFORM_ERROR_CODES,
  PLATFORM_ERRORS,
  PlatformError,
  RequestRefusedError,
  SetupError,
  StoreUnavailableError,
} from '../../lib/errors';

const FAMILY_CLASS = {
  setup: SetupError,
  login: LoginRequiredError,
  refused: RequestRefusedError,
  platform: PlatformError,
  store: StoreUnavailableError,
};

/** The code rows of the page's table: `code`, class, status, `error`, data. */
const documented = new Map(
  readFileSync(join(__dirname, '../../docs/errors.md'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `ERR_PLATFORM_'))
    .map((line) => {
      const cells = line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
      return [cells[0]!.replace(/`/g, ''), cells] as const;
    }),
);

test('docs/errors.md lists every code of the table, and no other', () => {
  expect([...documented.keys()].sort()).toEqual([...PLATFORM_ERROR_CODES].sort());
});

test.each(PLATFORM_ERROR_CODES)(
  'docs/errors.md gives %s its class, status, error and log level',
  (code) => {
    const row = PLATFORM_ERRORS[code];
    const [, className, status, error, level] = documented.get(code)!;
    expect(className).toBe(`\`${FAMILY_CLASS[row.family].name}\``);
    expect(status).toMatch(new RegExp(`^${row.status}\\b`));
    expect(error).toMatch(new RegExp(`^\`${row.error}\``));
    expect(level).toMatch(new RegExp(`^\`${row.level}\``));
  },
);

test('the situations table at the top names every status and error of the table', () => {
  const page = readFileSync(join(__dirname, '../../docs/errors.md'), 'utf8');
  const situations = page.slice(0, page.indexOf('## Error classes'));
  for (const code of PLATFORM_ERROR_CODES) {
    const { error } = PLATFORM_ERRORS[code];
    // The token client's raw answers (502/504) are documented as the entry's platform failure.
    expect(situations).toContain(`\`${error}\``);
  }
});
