// The entry-context judgement: every combination of Sec-Fetch-Site, Sec-Fetch-Dest and Referer.
import type { IncomingHttpHeaders } from 'node:http';
import {
  entryContextSchema,
  judgeEntryContext,
  type EntryContextSettings,
} from '../../lib/entry/entry-context';

const PLATFORM = 'https://platform.example';

const settings = (extra: Partial<EntryContextSettings> = {}): EntryContextSettings => ({
  platformOrigins: new Set([PLATFORM, 'https://m.platform.example']),
  destinations: new Set(['document']),
  allowMissingHeaders: false,
  allowDirectNavigation: false,
  ...extra,
});

const navigation = (headers: IncomingHttpHeaders): IncomingHttpHeaders => ({
  'sec-fetch-mode': 'navigate',
  ...headers,
});

describe('a browser that sends Fetch Metadata', () => {
  test.each([
    ['the platform page, cross-site', 'cross-site', `${PLATFORM}/`],
    [
      'the platform page with a path (referrer policy unsafe-url)',
      'cross-site',
      `${PLATFORM}/lobby?x=1`,
    ],
    ['a second platform origin', 'cross-site', 'https://m.platform.example/'],
    ['a platform on a sibling subdomain (same-site)', 'same-site', `${PLATFORM}/`],
  ])('accepts an entry from %s', (_name, site, referer) => {
    const headers = navigation({ 'sec-fetch-site': site, 'sec-fetch-dest': 'document', referer });
    expect(judgeEntryContext(headers, settings())).toBeUndefined();
  });

  test.each([
    ['an attacker page', 'cross-site', 'https://attacker.example/'],
    ['a look-alike origin', 'cross-site', 'https://platform.example.attacker.example/'],
    ['the platform on another port', 'cross-site', 'https://platform.example:8443/'],
    ['the platform over http', 'cross-site', 'http://platform.example/'],
    ["the game's own page", 'same-origin', 'https://game.example/'],
    ['an unparseable Referer', 'cross-site', 'not a url'],
  ])('reports foreign-referer for an entry from %s', (_name, site, referer) => {
    const headers = navigation({ 'sec-fetch-site': site, 'sec-fetch-dest': 'document', referer });
    expect(judgeEntryContext(headers, settings())).toBe('foreign-referer');
  });

  test('reports referer-missing when the page hid its origin (no-referrer)', () => {
    const headers = navigation({ 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'document' });
    expect(judgeEntryContext(headers, settings())).toBe('referer-missing');
    // allowMissingHeaders is for clients that send no metadata at all, not for hidden referrers.
    expect(judgeEntryContext(headers, settings({ allowMissingHeaders: true }))).toBe(
      'referer-missing',
    );
  });

  test.each(['image', 'script', 'empty', 'iframe', 'style', 'object'])(
    'reports unexpected-destination for Sec-Fetch-Dest: %s, even from the platform',
    (dest) => {
      const headers = { 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': dest, referer: PLATFORM };
      expect(judgeEntryContext(headers, settings())).toBe('unexpected-destination');
    },
  );

  test('accepts a framed entry from the platform in embedded mode', () => {
    const embedded = settings({ destinations: new Set(['document', 'iframe', 'frame']) });
    const headers = {
      'sec-fetch-site': 'cross-site',
      'sec-fetch-dest': 'iframe',
      referer: PLATFORM,
    };
    expect(judgeEntryContext(headers, embedded)).toBeUndefined();
    // …but not a frame of an attacker's page.
    expect(judgeEntryContext({ ...headers, referer: 'https://attacker.example/' }, embedded)).toBe(
      'foreign-referer',
    );
  });

  test('Sec-Fetch-Site: none is a direct navigation, accepted only when allowed', () => {
    const headers = navigation({ 'sec-fetch-site': 'none', 'sec-fetch-dest': 'document' });
    expect(judgeEntryContext(headers, settings())).toBe('direct-navigation');
    expect(judgeEntryContext(headers, settings({ allowMissingHeaders: true }))).toBe(
      'direct-navigation',
    );
    expect(judgeEntryContext(headers, settings({ allowDirectNavigation: true }))).toBeUndefined();
  });
});

describe('a client that sends no Fetch Metadata', () => {
  test('is judged by its Referer when it sends one (older browsers)', () => {
    expect(judgeEntryContext({ referer: `${PLATFORM}/` }, settings())).toBeUndefined();
    expect(judgeEntryContext({ referer: 'https://attacker.example/' }, settings())).toBe(
      'foreign-referer',
    );
    // An empty Referer is no Referer.
    expect(judgeEntryContext({ referer: '' }, settings())).toBe('headers-missing');
  });

  test('with neither header: headers-missing, accepted only with allowMissingHeaders (webviews)', () => {
    expect(judgeEntryContext({}, settings())).toBe('headers-missing');
    expect(judgeEntryContext({}, settings({ allowMissingHeaders: true }))).toBeUndefined();
  });
});

describe('the entry.context option', () => {
  test('leaves the mode to platformOrigins, with nothing allowed beyond the platform', () => {
    expect(entryContextSchema.parse({})).toEqual({
      allowMissingHeaders: false,
      allowDirectNavigation: false,
    });
  });

  test('refuses unknown keys and unknown modes', () => {
    expect(entryContextSchema.safeParse({ mode: 'strict' }).success).toBe(false);
    expect(entryContextSchema.safeParse({ mode: 'report', origins: [] }).success).toBe(false);
  });
});
