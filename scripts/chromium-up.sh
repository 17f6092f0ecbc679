#!/usr/bin/env bash
# Installs Debian's chromium for the console's browser tests (driven by
# playwright-core; Playwright's own browser download is not used).
# Debian/Ubuntu, run as root (CI) or with sudo. Does nothing when it is there.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ -x "${SESSIONSTORE_CHROMIUM:-/usr/bin/chromium}" ]; then exit 0; fi
echo "chromium is not installed; installing it from Debian's packages" >&2
as_root apt-get update -qq
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
