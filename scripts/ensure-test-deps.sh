#!/usr/bin/env bash
# Run before the test suite: the integration tests need redis-server and the browser test needs
# Chromium. On Debian/Ubuntu as root (or with passwordless sudo) they are installed here; elsewhere
# this says what to install and stops, rather than letting the suite fail later or skip.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || [ -n "${REDIS_URL:-}" ] || missing+=(redis-server)
[ -x /usr/bin/chromium ] || [ -n "${CHROMIUM_PATH:-}" ] || missing+=(chromium)
[ "${#missing[@]}" -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo"; else sudo="none"; fi
fi
if command -v apt-get >/dev/null 2>&1 && [ "$sudo" != "none" ]; then
  echo "Installing test dependencies: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi

echo "The test suite needs: ${missing[*]}" >&2
echo "  Debian/Ubuntu: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
echo "  macOS: brew install redis (and Chromium: set CHROMIUM_PATH to its binary)" >&2
echo "  Or point REDIS_URL at a running Redis you can flush keys in." >&2
exit 1
