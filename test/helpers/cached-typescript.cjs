// Preload (`node -r test/helpers/cached-typescript.cjs program.ts`) for the programs the tests
// start as processes of their own: `.ts` compiled by esbuild as esbuild-register compiles it, each
// file's output kept on disk under a hash of its contents and its compile options (its path among
// them). The suite starts dozens of such processes on the same sources: esbuild-register compiled
// lib/ afresh in each, and a start took 1.3–1.5 CPU-s where it takes 0.6 from the cache. An edited
// file gets a new entry, so a process always runs the sources as they stand.
/* global require, __dirname, process */
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS: it loads before any TypeScript can */
'use strict';
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..', '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'cached-typescript');
const TARGET = `node${process.versions.node}`;
const VERSION = require('esbuild/package.json').version;

let esbuild; // loaded on the first file not in the cache only

/** esbuild's options for `filename`, part of its entry's key with the source and esbuild's version. */
const optionsFor = (filename) => ({
  loader: 'ts',
  format: 'cjs',
  target: TARGET,
  sourcefile: filename,
  sourcemap: 'inline',
  // As tsconfig.json's ES2022 target: class fields with define semantics.
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
});

require.extensions['.ts'] = (module, filename) => {
  const source = readFileSync(filename, 'utf8');
  const options = optionsFor(filename);
  const key = createHash('sha256')
    .update(`${VERSION}\0${JSON.stringify(options)}\0${source}`)
    .digest('hex');
  const entry = join(CACHE, `${key}.js`);
  let code;
  try {
    code = readFileSync(entry, 'utf8');
  } catch {
    esbuild ??= require('esbuild');
    code = esbuild.transformSync(source, options).code;
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
