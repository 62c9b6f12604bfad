// After the build: dist/testing (the contract suite) runs inside a studio's test runner, which
// follows source maps, and its failures would name lib/testing/*.ts, which the package does not
// ship. Without maps they name dist/testing/*.js: shipped, readable, its comments kept by tsc.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const folder = 'dist/testing';
for (const name of readdirSync(folder)) {
  const path = `${folder}/${name}`;
  if (name.endsWith('.js.map')) rmSync(path);
  else if (name.endsWith('.js')) {
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'),
    );
  }
}
