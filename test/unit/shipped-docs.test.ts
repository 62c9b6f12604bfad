// The documents the tarball ships agree with it: every relative link in them (pages and pictures)
// reaches a file `files` in package.json ships, and the CHANGELOG's newest entry is the version
// package.json gives the tarball. A link into the repository (bench/, a screenshot) is a dead link
// for everyone who read the docs from node_modules.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  files: string[];
};

/** True when npm would ship `path` under one of `files`' entries (a file, a folder or `dir/*.ext`). */
function shipped(path: string): boolean {
  if (['package.json', 'LICENSE'].includes(path)) return true;
  return pkg.files.some((entry) => {
    if (entry.includes('*')) {
      const pattern = entry.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
      return new RegExp(`^${pattern}$`).test(path);
    }
    return path === entry || path.startsWith(`${entry}/`);
  });
}

const documents = [
  'README.md',
  'CHANGELOG.md',
  'SECURITY.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
].filter(shipped);

/** Every relative link target of a markdown text: `[text](target)` and `![alt](target)`. */
function relativeLinks(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'));
}

test('every relative link of a shipped document reaches a shipped file', () => {
  const dead: string[] = [];
  for (const document of documents) {
    const text = readFileSync(join(root, document), 'utf8');
    for (const target of relativeLinks(text)) {
      const path = normalize(join(dirname(document), target.split('#')[0]!));
      if (!shipped(path) || !existsSync(join(root, path))) dead.push(`${document} → ${target}`);
    }
  }
  expect(documents.length).toBeGreaterThan(5);
  expect(dead).toEqual([]);
});

test("the CHANGELOG's newest entry is package.json's version", () => {
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  const newest = /^## \[([^\]]+)\](?: \(([^)]+)\))?/m.exec(changelog);
  expect(newest).not.toBeNull();
  // "[Unreleased] (0.2.0)": what the version will be released as; else the released version.
  const version = newest![1] === 'Unreleased' ? newest![2] : newest![1];
  expect(version).toBe(pkg.version);
});
