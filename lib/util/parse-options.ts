// Turns a zod failure on an options object into the TypeError a developer wants to read: the
// option's name and what is allowed, never the value (it may be a secret).
import type { z } from 'zod';

/** Parses `input` with `schema`, or throws a TypeError naming each wrong option. */
export function parseOptions<S extends z.ZodType>(
  schema: S,
  input: unknown,
  owner: string,
): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return `unknown option${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `\`${k}\``).join(', ')}`;
    }
    const path = issue.path.length > 0 ? `\`${issue.path.join('.')}\`` : 'options';
    return `${path}: ${issue.message}`;
  });
  throw new TypeError(`${owner}: ${problems.join('; ')}.`);
}
