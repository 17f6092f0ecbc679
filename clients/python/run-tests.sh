#!/usr/bin/env bash
# The Python client's tests against the real server: makes a venv in .venv,
# installs the package (from gen/python and src/) with the pinned test extras,
# starts PostgreSQL if needed and runs pytest. Needs `npm ci` done in the repo
# root (the tests start the server with node_modules/.bin/tsx).
# Set SESSIONSTORE_TEST_DATABASE_URL to use a PostgreSQL that is already up.
# Arguments go to pytest; `--install-only` stops after the install.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${PYTHON:-python3}
venv=$here/.venv

if [ ! -x "$venv/bin/python" ]; then
  # Debian's python3 has no ensurepip without the python3-venv package; then
  # the venv borrows the system's pip instead.
  if ! "$python" -m venv "$venv" 2>/dev/null; then
    rm -rf "$venv"
    "$python" -m venv --without-pip --system-site-packages "$venv"
  fi
fi
# A stale build/ would put files deleted from gen/python or src/ into the wheel.
rm -rf "$here/build"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$here[test]"
# CI runs this before `npx buf generate`: scripts/protoc-python takes the
# pinned grpcio-tools from this venv.
if [ "${1:-}" = --install-only ]; then exit 0; fi

if [ ! -x "$root/node_modules/.bin/tsx" ]; then
  echo "run-tests.sh: node_modules/.bin/tsx is missing: run 'npm ci' in $root first" >&2
  exit 1
fi

if [ -z "${SESSIONSTORE_TEST_DATABASE_URL:-}" ]; then
  "$root/scripts/postgres-up.sh" >/dev/null
fi

# pytest exits non-zero on failures and when no test ran (conftest.py also
# fails a run in which nothing passed).
cd "$here"
exec "$venv/bin/python" -m pytest "$@"
