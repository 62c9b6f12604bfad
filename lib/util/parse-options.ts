// Option parsing for every entry point: a zod schema's failure becomes one SetupError (`ERR_PLATFORM_INVALID_OPTION`) that
// names each wrong option and says what is allowed (never the value: it may be a secret), with a
// "did you mean" for a misspelt key.
import { z } from 'zod';
import { invalidOption } from '../errors';

/**
 * The type of a strict options schema, written out where a schema is declared so that the built
 * `.d.ts` names its shape (`typeof shape`) instead of spelling it out: the shape keeps each field's
 * TSDoc, which an editor then shows on hover over the option in `z.input<typeof schema>`.
 */
export type OptionsSchema<Shape extends z.ZodRawShape> = z.ZodObject<Shape, z.core.$strict>;

/** An integer option from `min` to `max`; `unit` completes "must be an integer…" (` number of bytes`). */
export const integerOption = (min: number, max: number, unit: string) =>
  z
    .number({ error: `must be an integer${unit} from ${min} to ${max}` })
    .int()
    .min(min)
    .max(max);

type Schema = z.ZodType;

/** The schema under its wrappers (optional, default, transform…), where its keys are. */
function unwrap(schema: Schema): Schema {
  let node = schema;
  for (;;) {
    const def = node.def as { type: string; innerType?: Schema; in?: Schema };
    if (def.innerType !== undefined) node = def.innerType;
    else if (def.type === 'pipe' && def.in !== undefined) node = def.in;
    else return node;
  }
}

/** The union's members that `value` is meant for: by its discriminator, when the union has one. */
function membersFor(
  members: Schema[],
  discriminator: string | undefined,
  value: unknown,
): Schema[] {
  if (discriminator === undefined || typeof value !== 'object' || value === null) return members;
  const tag = (value as Record<string, unknown>)[discriminator];
  const matching = members.filter((member) => {
    const def = unwrap(member).def as { shape?: Record<string, Schema> };
    const literal = def.shape?.[discriminator]?.def as { values?: unknown[] } | undefined;
    return literal?.values?.includes(tag) === true;
  });
  return matching.length > 0 ? matching : members;
}

/** The option names of the object schemas found at `path` in `value` (several under a union). */
function optionNamesAt(schema: Schema, path: readonly PropertyKey[], value: unknown): string[] {
  const def = unwrap(schema).def as {
    type: string;
    shape?: Record<string, Schema>;
    element?: Schema;
    options?: Schema[];
    discriminator?: string;
  };
  if (def.type === 'union') {
    return membersFor(def.options ?? [], def.discriminator, value).flatMap((member) =>
      optionNamesAt(member, path, value),
    );
  }
  if (path.length === 0) return def.type === 'object' ? Object.keys(def.shape!) : [];
  const [key, ...rest] = path;
  const child =
    def.type === 'object'
      ? def.shape?.[String(key)]
      : def.type === 'array'
        ? def.element
        : undefined;
  const next =
    typeof value === 'object' && value !== null
      ? (value as Record<PropertyKey, unknown>)[key!]
      : undefined;
  return child === undefined ? [] : optionNamesAt(child, rest, next);
}

/** Edit distance counting a swap of neighbours as one edit: `optinal` → `optional`, `prot` → `port`. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

function commonPrefix(a: string, b: string): number {
  let length = 0;
  while (length < a.length && length < b.length && a[length] === b[length]) length++;
  return length;
}

/**
 * The known option an unknown key most likely meant, if one is close: a typo (`optinal` →
 * `optional`) or most of its name (`timeout` → `timeoutMs`, `maxEntry` → `maxEntries`).
 */
function suggestOption(unknown: string, known: readonly string[]): string | undefined {
  const lower = unknown.toLowerCase();
  const maxDistance = lower.length <= 4 ? 1 : 2;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const candidate = name.toLowerCase();
    const edits = distance(lower, candidate);
    const shared = commonPrefix(lower, candidate);
    const close =
      edits <= maxDistance ||
      shared >= Math.max(3, Math.ceil(0.75 * Math.min(lower.length, candidate.length)));
    if (close && edits < (best?.distance ?? Infinity)) best = { name, distance: edits };
  }
  return best?.name;
}

const pathName = (path: readonly PropertyKey[]): string => path.map(String).join('.');

function describeIssue(issue: z.core.$ZodIssue, schema: Schema, input: unknown): string {
  if (issue.code === 'unrecognized_keys') {
    const known = [...new Set(optionNamesAt(schema, issue.path, input))];
    const prefix = issue.path.length > 0 ? `${pathName(issue.path)}.` : '';
    return issue.keys
      .map((key) => {
        const suggestion = suggestOption(key, known);
        const hint =
          suggestion !== undefined
            ? `did you mean \`${prefix}${suggestion}\`?`
            : `known options: ${known.join(', ')}`;
        return `unknown option \`${prefix}${key}\` (${hint})`;
      })
      .join('; ');
  }
  const name = issue.path.length > 0 ? `\`${pathName(issue.path)}\`` : 'the options';
  // `input` is there because parseOptions asks zod to report it; it is never shown.
  const required =
    issue.code === 'invalid_type' && issue.path.length > 0 && issue.input === undefined
      ? ' is required and'
      : '';
  // The schemas phrase their messages as "must be …"; zod's own fall back to "`name`: …".
  return /^(must|is) /.test(issue.message)
    ? `${name}${required} ${issue.message}`
    : `${name}${required}: ${issue.message}`;
}

/**
 * Parses `input` with `schema` (`undefined` reads as `{}`), or throws a SetupError (`ERR_PLATFORM_INVALID_OPTION`)
 * naming each wrong option, prefixed with `owner` (e.g. `platformLogin()`).
 */
export function parseOptions<S extends z.ZodType>(
  schema: S,
  input: unknown,
  owner: string,
): z.output<S> {
  const given = input === undefined ? {} : input;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw invalidOption(`${owner}: the options must be an object.`);
  }
  const result = schema.safeParse(given, { reportInput: true });
  if (result.success) return result.data;
  const { issues } = result.error;
  const problems = issues.map((issue) => describeIssue(issue, schema, given)).join('; ');
  // The option the first problem names, for the error's `option` field.
  const first = issues[0]!;
  const path = first.code === 'unrecognized_keys' ? [...first.path, first.keys[0]!] : first.path;
  throw invalidOption(`${owner}: ${problems}.`, path.length > 0 ? pathName(path) : undefined);
}
