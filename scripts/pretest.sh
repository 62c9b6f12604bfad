#!/usr/bin/env bash
# Runs before `npm test`: the test dependencies of this machine, then the type check beside the lint
# and the build (each is one single-threaded process: side by side they take the type check's time on
# two cores, not the sum). Any failure stops the tests, with that tool's own output.
set -euo pipefail
bash scripts/ensure-test-deps.sh
npm run -s typecheck &
typecheck=$!
npm run -s lint
npm run -s build
wait "$typecheck"
