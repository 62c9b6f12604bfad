#!/usr/bin/env bash
# Runs before `npm test`: the test dependencies of this machine, then the checks and the build in two
# lanes of about equal length, one per core (each tool is one single-threaded process): the type
# check of everything (`tsc -p tsconfig.json`, the longest alone) beside the rest of `npm run
# typecheck` (the package against ioredis 6), the lint and the build, one after another. Any failure
# stops the tests, with that tool's own output.
set -euo pipefail
bash scripts/ensure-test-deps.sh
tsc -p tsconfig.json --noEmit &
typecheck=$!
tsc -p tsconfig.ioredis6.json --noEmit
npm run -s lint
npm run -s build
wait "$typecheck"
