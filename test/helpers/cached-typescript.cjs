// Preload (`node -r test/helpers/cached-typescript.cjs program.ts`) for the programs the tests
// start as processes of their own: `.ts` compiled by esbuild as esbuild-register compiles it, each
// file's output kept on disk under a hash of its path and contents. The suite starts dozens of
// such processes on the same sources; esbuild-register compiled lib/ afresh in each, about 1 CPU-s
// a start (a tenth of a child's work in the suite). An edited file gets a new entry, so a process
// always runs the sources as they stand.
/* global require, __dirname, process */
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS: it loads before any TypeScript can */
'use strict';
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..', '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'cached-typescript');
const TARGET = `node${process.versions.node}`;

let esbuild; // loaded on the first file not in the cache only
let version;

function compile(source, filename) {
  esbuild ??= require('esbuild');
  return esbuild.transformSync(source, {
    loader: 'ts',
    format: 'cjs',
    target: TARGET,
    sourcefile: filename,
    sourcemap: 'inline',
    // As tsconfig.json's ES2022 target: class fields with define semantics.
    tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
  }).code;
}

require.extensions['.ts'] = (module, filename) => {
  const source = readFileSync(filename, 'utf8');
  version ??= require('esbuild/package.json').version;
  const key = createHash('sha256')
    .update(`${version}\0${TARGET}\0${filename}\0${source}`)
    .digest('hex');
  const entry = join(CACHE, `${key}.js`);
  let code;
  try {
    code = readFileSync(entry, 'utf8');
  } catch {
    code = compile(source, filename);
    mkdirSync(CACHE, { recursive: true });
    // Written aside then renamed: a process starting beside this one reads a whole entry or none.
    const aside = `${entry}.${process.pid}`;
    writeFileSync(aside, code);
    renameSync(aside, entry);
  }
  module._compile(code, filename);
};

// Stack traces name the .ts lines (the inline source maps).
process.setSourceMapsEnabled(true);
