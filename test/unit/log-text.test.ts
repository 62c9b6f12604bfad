// Text from outside on a log line: markup, control characters, line breaks and reordering marks are
// written as \uXXXX escapes; everything else as it came.
import { escapingLogger, logText } from '../../lib/util/log-text';

test('escapes markup, control characters, line breaks, lone surrogates and bidi overrides', () => {
  expect(logText('<script>alert("x")</script>&amp;')).toBe(
    '\\u003cscript\\u003ealert("x")\\u003c/script\\u003e\\u0026amp;',
  );
  expect(logText('a\r\nforged line\u0007\u001b[31m\u0085')).toBe(
    'a\\u000d\\u000aforged line\\u0007\\u001b[31m\\u0085',
  );
  expect(logText('id\u202egpj.exe\u2028x\ud800')).toBe('id\\u202egpj.exe\\u2028x\\ud800');
  // A backslash too, so that text cannot pass for an escape of ours.
  expect(logText('\\u003c')).toBe('\\u005cu003c');
  expect(logText('player-ada 玩家 \u{1F3AE} "quoted" it\'s')).toBe(
    'player-ada 玩家 \u{1F3AE} "quoted" it\'s',
  );
});

test('the escaping logger escapes the message and every string field, and leaves other values', () => {
  const lines: [string, Record<string, unknown>, string][] = [];
  const record =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void =>
      void lines.push([level, fields, message]);
  const logger = escapingLogger({
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
  });
  logger.warn({ openId: '<b>ada</b>', status: 502, ok: false }, 'said "<i>no</i>"\n');
  const plain = { openId: 'player-ada', status: 401 };
  logger.debug(plain, 'plain');
  expect(lines).toEqual([
    [
      'warn',
      { openId: '\\u003cb\\u003eada\\u003c/b\\u003e', status: 502, ok: false },
      'said "\\u003ci\\u003eno\\u003c/i\\u003e"\\u000a',
    ],
    ['debug', plain, 'plain'],
  ]);
  // Nothing to escape: the very fields given, not a copy.
  expect(lines[1]![1]).toBe(plain);
});
