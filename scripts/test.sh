#!/usr/bin/env bash
# `npm test`, after scripts/pretest.sh: Jest with the type checks (`npm run typecheck`) and the lint
# (`npm run lint`) beside it, at the lowest CPU priority. The tests mostly wait (on Redis, child
# processes and timers), so the CPU is often idle: the checks run there instead of for about 35 s
# before the first test, and give way to any test ready to run. Their output follows the
# tests'; a failed check fails `npm test` as a failed test does.
set -uo pipefail
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
nice -n 19 npm run -s typecheck >"$out/typecheck" 2>&1 &
typecheck=$!
nice -n 19 npm run -s lint >"$out/lint" 2>&1 &
lint=$!
jest "$@"
status=$?
for check in typecheck lint; do
  if wait "${!check}"; then
    echo "npm run $check: passed (beside the tests)"
  else
    echo "npm run $check: FAILED (beside the tests):" >&2
    cat "$out/$check" >&2
    status=1
  fi
done
exit "$status"
