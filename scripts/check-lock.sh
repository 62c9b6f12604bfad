#!/usr/bin/env bash
# Fails when package-lock.json is not complete, i.e. when `npm install` would rewrite it. A lock that
# lacks other platforms' optional binaries (@swc/core-*, @unrs/resolver-binding-*) still installs
# here, but `npm ci` refuses it and `npm install` on a fresh clone adds them back; npm leaves an
# optional package out of the lock it writes when it cannot fetch that package's manifest, so a
# lock written offline or with a partial cache loses them without a word. After adding or
# upgrading a dependency, run `npm install` with the registry reachable, then this.
set -euo pipefail
cd "$(dirname "$0")/.."

before="$(mktemp)"
trap 'cp "$before" package-lock.json; rm -f "$before"' EXIT
cp package-lock.json "$before"
npm install --package-lock-only --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
if ! cmp -s "$before" package-lock.json; then
  echo "package-lock.json is incomplete: \`npm install\` rewrites it. What it would change:" >&2
  diff -u "$before" package-lock.json | head -60 >&2 || true
  echo "Fix: run \`npm install\` with the registry reachable and commit package-lock.json." >&2
  exit 1
fi
echo "package-lock.json is complete: npm install leaves it as it is."
