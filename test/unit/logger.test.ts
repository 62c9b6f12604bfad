// Redaction of URLs before they are logged, and the default debug logger.
import createDebug from 'debug';
import { debugLogger, isPlatformLogger, redactUrl } from '../../lib/observability/logger';

describe('redactUrl', () => {
  test.each([
    ['/platform/callback?code=abc123', '/platform/callback?code=[redacted]'],
    ['/cb?code=a&code=b', '/cb?code=[redacted]&code=[redacted]'],
    ['/cb?x=1&CODE=abc', '/cb?x=1&CODE=[redacted]'],
    ['/cb?%63ode=abc', '/cb?%63ode=[redacted]'],
    [
      '/t?access_token=a&refresh_token=b&client_secret=c&keep=1',
      '/t?access_token=[redacted]&refresh_token=[redacted]&client_secret=[redacted]&keep=1',
    ],
    ['/cb?error=access_denied', '/cb?error=access_denied'],
    ['/cb', '/cb'],
    ['https://h.example/cb?code=x#frag', 'https://h.example/cb?code=[redacted]'],
    ['/cb?%E0%A4%A=1&code=z', '/cb?%E0%A4%A=1&code=[redacted]'],
  ])('%s', (input, expected) => {
    expect(redactUrl(input)).toBe(expected);
  });
});

describe('debugLogger', () => {
  test('writes structured lines under express-platform-login:<level> when enabled', () => {
    const written: string[] = [];
    const originalLog = createDebug.log;
    createDebug.log = (...args: unknown[]) => void written.push(args.map(String).join(' '));
    createDebug.enable('express-platform-login:warn');
    try {
      const logger = debugLogger();
      logger.warn({ openId: 'player-ada' }, 'token refresh failed');
      logger.debug({ openId: 'player-ada' }, 'not enabled');
      expect(written).toHaveLength(1);
      expect(written[0]).toContain('express-platform-login:warn');
      expect(written[0]).toContain('token refresh failed');
      expect(written[0]).toContain('player-ada');
    } finally {
      createDebug.disable();
      createDebug.log = originalLog;
    }
  });

  test('is recognised as a logger; console.log alone is not', () => {
    expect(isPlatformLogger(debugLogger())).toBe(true);
    expect(isPlatformLogger(console.log)).toBe(false);
    expect(isPlatformLogger(console)).toBe(true);
  });
});
