// The one rule for where the package may redirect a browser (successRedirect, logout redirectTo).
import { isSameSitePath } from '../../lib/util/same-site-path';

test.each([
  ['/', true],
  ['/game?from=platform', true],
  ['/a/b#c', true],
  ['//evil.example/', false],
  ['/\\evil.example', false],
  ['https://evil.example/', false],
  ['game', false],
  ['/with space', false],
  ['/é', false],
  ['', false],
])('%s → %s', (path, expected) => {
  expect(isSameSitePath(path)).toBe(expected);
});
