// Makes text from outside (the platform's open_ids and error descriptions, a request's URL) safe for
// a log line: a log viewer that renders HTML runs no markup from it, and a terminal or a line-based
// collector sees no control character, line break or reordering mark it brought.

/**
 * Control characters, lone surrogates, line and paragraph separators, bidirectional marks and
 * overrides, and `& < > \` (the backslash, so that an escape in the text cannot pass for one of ours).
 */
const UNSAFE = /[\p{Cc}\p{Cs}&<>\\\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;
const EVERY_UNSAFE = new RegExp(UNSAFE.source, 'gu');

/** `text` with each unsafe character written as `\uXXXX`; other characters as they are. */
export function logText(text: string): string {
  if (!UNSAFE.test(text)) return text;
  return text.replace(
    EVERY_UNSAFE,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The four levels of a pino-compatible logger, as a log line's writer. */
type Levels<L> = Record<'debug' | 'info' | 'warn' | 'error', L>;
type WriteLine = (fields: Record<string, unknown>, message: string) => void;

/**
 * `logger` with the message and every string field of each line passed through {@link logText}
 * first (fields one level deep: the package's lines are flat). A line with nothing to escape is
 * passed on as it is, without a copy: a refused request's debug line is written for every 401.
 */
export function escapingLogger(logger: Levels<WriteLine>): Levels<WriteLine> {
  const line =
    (level: keyof Levels<WriteLine>): WriteLine =>
    (fields, message) => {
      let safe = fields;
      for (const name in fields) {
        const value = fields[name];
        if (typeof value !== 'string' || !UNSAFE.test(value)) continue;
        if (safe === fields) safe = { ...fields };
        safe[name] = logText(value);
      }
      logger[level](safe, logText(message));
    };
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}
