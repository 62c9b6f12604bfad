// A logger that keeps every line it is given, for tests that assert what a studio's log shows.
import type { LogFields } from '../../lib/observability/logger';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: LogFields;
  message: string;
}

/** The logger, every line it got, and `seen()`: what a production log shows (warn and error). */
export function recordingLogger() {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (fields: LogFields, message: string) =>
    void lines.push({ level, fields, message });
  const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  const seen = () => lines.filter((line) => line.level === 'warn' || line.level === 'error');
  return { logger, lines, seen };
}
