#!/usr/bin/env bash
# Runs before `npm test`: the test dependencies of this machine, then the build (the package and
# quick-start tests install dist/). The type checks and the lint run beside the tests
# (scripts/test.sh). Any failure stops the tests, with that tool's own output.
set -euo pipefail
bash scripts/ensure-test-deps.sh
npm run -s build
